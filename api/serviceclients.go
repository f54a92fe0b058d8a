package api

// Service clients (/v1/service-clients, permission admin:config): the
// credentials of the client_credentials grant of POST /v1/auth/token. A client
// carries roles and/or permissions; its access tokens carry them as claims and
// the usual union applies. client_id (vcc_<tenant>_<id>) names the tenant, so
// the token endpoint needs no X-Tenant-ID. The secret is shown once and only
// its SHA-256 is stored. Revoking a client refuses its unexpired tokens on
// their next request.

import (
	"github.com/gofiber/fiber/v2"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/db/dbsqlc"
	"github.com/valuecase/valuecase/internal/credential"
	"github.com/valuecase/valuecase/internal/rbac"
	"github.com/valuecase/valuecase/internal/wire"
)

type serviceClientJSON struct {
	ID          string   `json:"id"`
	Name        string   `json:"name"`
	ClientID    string   `json:"client_id"`
	Roles       []string `json:"roles"`
	Permissions []string `json:"permissions"`
	CreatedBy   string   `json:"created_by"`
	CreatedAt   string   `json:"created_at"`
	LastUsedAt  *string  `json:"last_used_at"`
}

type serviceClientCreatedJSON struct {
	serviceClientJSON
	ClientSecret string `json:"client_secret"` // shown once
}

func toServiceClientJSON(sc dbsqlc.ServiceClient) serviceClientJSON {
	return serviceClientJSON{
		ID: sc.ID.String(), Name: sc.Name, ClientID: sc.ClientID, Roles: nonNil(sc.Roles), Permissions: rbac.SortPermissions(sc.Permissions),
		CreatedBy: sc.CreatedBy, CreatedAt: wire.Timestamp(sc.CreatedAt), LastUsedAt: optTimestamp(sc.LastUsedAt),
	}
}

func (s *Server) createServiceClient(c *fiber.Ctx) error {
	b, err := parseBody(c)
	if err != nil {
		return err
	}
	name := b.Text("name", true, maxIdentityName)
	roles := b.TextList("roles", maxListItems, maxRoleNameLen)
	perms := readPermissions(b, "permissions")
	if len(roles) == 0 && len(perms) == 0 {
		b.Fail("permissions", "required", "give the client roles, permissions or both")
	}
	if err := b.Done(); err != nil {
		return err
	}
	row, secret, err := credential.CreateServiceClient(c.UserContext(), requestTx(c), principal(c).actor(), credential.ClientInput{Name: *name, Roles: roles, Permissions: perms})
	if err != nil {
		return identityError(err)
	}
	noStore(c)
	c.Location("/v1/service-clients/" + row.ID.String())
	return c.Status(fiber.StatusCreated).JSON(serviceClientCreatedJSON{serviceClientJSON: toServiceClientJSON(row), ClientSecret: secret})
}

func (s *Server) listServiceClients(c *fiber.Ctx) error {
	q := parseQuery(c)
	page, size := q.page(maxUserPageSize)
	if err := q.done(); err != nil {
		return err
	}
	rows, err := db.Q.ServiceClientList(c.UserContext(), requestTx(c), dbsqlc.ServiceClientListParams{
		TenantID: principal(c).TenantID, PageLimit: int32(size), PageOffset: int32((page - 1) * size),
	})
	if err != nil {
		return err
	}
	return paginate(c, page, size, rows,
		func(r dbsqlc.ServiceClientListRow) int64 { return r.Total },
		func(r dbsqlc.ServiceClientListRow) serviceClientJSON { return toServiceClientJSON(r.ServiceClient) },
		func() (int64, error) {
			return db.Q.ServiceClientCount(c.UserContext(), requestTx(c), principal(c).TenantID)
		})
}

func (s *Server) getServiceClient(c *fiber.Ctx) error {
	id, err := pathID(c, "id", "service client")
	if err != nil {
		return err
	}
	row, err := db.Q.ServiceClientGet(c.UserContext(), requestTx(c), dbsqlc.ServiceClientGetParams{TenantID: principal(c).TenantID, ID: id})
	if err := found("service client", err); err != nil {
		return err
	}
	return sendRecord(c, row.CreatedAt, toServiceClientJSON(row)) // never edited: created_at is its version
}

func (s *Server) revokeServiceClient(c *fiber.Ctx) error {
	id, err := pathID(c, "id", "service client")
	if err != nil {
		return err
	}
	// The only change a client sees is this revocation (conditional below), so the check holds to the write.
	if row, err := db.Q.ServiceClientGet(c.UserContext(), requestTx(c), dbsqlc.ServiceClientGetParams{TenantID: principal(c).TenantID, ID: id}); err == nil {
		if err := checkIfMatch(c, row.CreatedAt); err != nil {
			return err
		}
	}
	if err := credential.RevokeServiceClient(c.UserContext(), requestTx(c), principal(c).TenantID, id); err != nil {
		return identityError(err)
	}
	return c.SendStatus(fiber.StatusNoContent)
}
