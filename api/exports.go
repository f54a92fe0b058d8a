package api

// Exports of business cases: POST queues an export (the row and
// an outbox event in one transaction); the export workflow
// (workflows/businesscase_export.go) renders and stores the file; GET reports
// progress and serves the file once it succeeded. Rules live in internal/export.

import (
	"errors"
	"fmt"
	"net/url"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/db/dbsqlc"
	"github.com/valuecase/valuecase/internal/export"
	"github.com/valuecase/valuecase/internal/rbac"
	"github.com/valuecase/valuecase/internal/render"
	"github.com/valuecase/valuecase/internal/validation"
	"github.com/valuecase/valuecase/internal/wire"
)

const maxExportPageSize = 100

// exportsRoutes mounts the exports on the authenticated /v1 group.
func (s *Server) exportsRoutes(v1 fiber.Router) {
	v1.Post("/business-cases/:id/export", s.require(rbac.BusinessCasesRead), s.createExport)
	v1.Get("/business-cases/:id/exports", s.require(rbac.BusinessCasesRead), s.listExports)
	v1.Get("/business-cases/:id/exports/:export_id", s.require(rbac.BusinessCasesRead), s.getExport)
	v1.Get("/business-cases/:id/exports/:export_id/download", s.require(rbac.BusinessCasesRead), s.downloadExport)
}

type exportJSON struct {
	ID                string  `json:"id"`
	BusinessCaseID    string  `json:"business_case_id"`
	Format            string  `json:"format"`
	IncludeAppendices bool    `json:"include_appendices"`
	Watermark         *string `json:"watermark"`
	Status            string  `json:"status"`
	Progress          int32   `json:"progress"`
	StatusURL         string  `json:"status_url"`
	DownloadURL       *string `json:"download_url"`
	Size              *int64  `json:"size"`
	Sha256            *string `json:"sha256"`
	Error             *string `json:"error"`
	CreatedAt         string  `json:"created_at"`
	StartedAt         *string `json:"started_at"`
	FinishedAt        *string `json:"finished_at"`
	ExpiresAt         *string `json:"expires_at"`
}

func toExportJSON(r dbsqlc.ExportGetRow) exportJSON {
	status := fmt.Sprintf("/v1/business-cases/%s/exports/%s", r.BusinessCaseID, r.ID)
	j := exportJSON{
		ID: r.ID.String(), BusinessCaseID: r.BusinessCaseID.String(), Format: r.Format, IncludeAppendices: r.IncludeAppendices,
		Watermark: r.Watermark, Status: r.Status, Progress: r.Progress, StatusURL: status, Size: r.Size, Sha256: r.Sha256, Error: r.Error,
		CreatedAt: wire.Timestamp(r.CreatedAt), StartedAt: optTimestamp(r.StartedAt), FinishedAt: optTimestamp(r.FinishedAt), ExpiresAt: optTimestamp(r.ExpiresAt),
	}
	if export.CheckDownload(export.Status(r.Status), r.ExpiresAt, time.Now()) == nil {
		j.DownloadURL = new(status + "/download")
	}
	return j
}

func (s *Server) createExport(c *fiber.Ctx) error {
	if err := parseQuery(c).done(); err != nil {
		return err
	}
	b, err := parseBody(c)
	if err != nil {
		return err
	}
	format := b.Enum("format", true, validation.Names(render.Formats))
	appendices := b.Boolean("include_appendices")
	watermark := b.Text("watermark", false, render.MaxWatermarkRunes)
	if err := b.Done(); err != nil {
		return err
	}
	req := export.Request{Format: render.Format(*format), IncludeAppendices: appendices != nil && *appendices}
	if watermark != nil {
		req.Watermark = *watermark
	}
	if err := req.Check(); err != nil {
		return err
	}
	caseID, err := pathID(c, "id", "business case")
	if err != nil {
		return err
	}
	created, err := export.Queue(c.UserContext(), requestTx(c), principal(c).TenantID, caseID, req, principal(c).Subject)
	if err != nil {
		return found("business case", err)
	}
	body := toExportJSON(dbsqlc.ExportGetRow(created))
	c.Location(body.StatusURL)
	return c.Status(fiber.StatusAccepted).JSON(body)
}

func (s *Server) listExports(c *fiber.Ctx) error {
	q := parseQuery(c)
	page, size := q.page(maxExportPageSize)
	if err := q.done(); err != nil {
		return err
	}
	row, err := loadBusinessCase(c, false)
	if err != nil {
		return err
	}
	ctx, tx := c.UserContext(), requestTx(c)
	rows, err := db.Q.ExportList(ctx, tx, dbsqlc.ExportListParams{TenantID: row.TenantID, BusinessCaseID: row.ID, PageLimit: int32(size), PageOffset: int32((page - 1) * size)})
	if err != nil {
		return err
	}
	return paginate(c, page, size, rows,
		func(r dbsqlc.ExportListRow) int64 { return r.Total },
		func(r dbsqlc.ExportListRow) exportJSON {
			return toExportJSON(dbsqlc.ExportGetRow{ID: r.ID, BusinessCaseID: r.BusinessCaseID, Format: r.Format, IncludeAppendices: r.IncludeAppendices,
				Watermark: r.Watermark, Status: r.Status, Progress: r.Progress, Size: r.Size, Sha256: r.Sha256, Error: r.Error,
				CreatedAt: r.CreatedAt, StartedAt: r.StartedAt, FinishedAt: r.FinishedAt, ExpiresAt: r.ExpiresAt})
		},
		func() (int64, error) {
			return db.Q.ExportCount(ctx, tx, dbsqlc.ExportCountParams{TenantID: row.TenantID, BusinessCaseID: row.ID})
		})
}

// exportIDs reads the case and export ids of the path.
func exportIDs(c *fiber.Ctx) (caseID, exportID uuid.UUID, err error) {
	if caseID, err = pathID(c, "id", "business case"); err != nil {
		return
	}
	exportID, err = pathID(c, "export_id", "export")
	return
}

func (s *Server) getExport(c *fiber.Ctx) error {
	if err := parseQuery(c).done(); err != nil {
		return err
	}
	caseID, id, err := exportIDs(c)
	if err != nil {
		return err
	}
	row, err := db.Q.ExportGet(c.UserContext(), requestTx(c), dbsqlc.ExportGetParams{TenantID: principal(c).TenantID, BusinessCaseID: caseID, ID: id})
	if err != nil {
		return found("export", err)
	}
	return sendRecord(c, row.CreatedAt, toExportJSON(row)) // read-only: the digest part of the ETag follows its progress
}

func (s *Server) downloadExport(c *fiber.Ctx) error {
	if err := parseQuery(c).done(); err != nil {
		return err
	}
	caseID, id, err := exportIDs(c)
	if err != nil {
		return err
	}
	ctx, tx, tenant := c.UserContext(), requestTx(c), principal(c).TenantID
	file, err := db.Q.ExportContent(ctx, tx, dbsqlc.ExportContentParams{TenantID: tenant, BusinessCaseID: caseID, ID: id})
	if err != nil {
		return found("export", err)
	}
	if err := export.CheckDownload(export.Status(file.Status), file.ExpiresAt, time.Now()); err != nil {
		if notReady, ok := errors.AsType[*export.NotReadyError](err); ok {
			return Conflict("%s", notReady.Reason)
		}
		return err
	}
	bc, err := db.Q.BusinessCaseGet(ctx, tx, dbsqlc.BusinessCaseGetParams{TenantID: tenant, ID: caseID})
	if err != nil {
		return found("business case", err)
	}
	f := render.Format(file.Format)
	etag := `"` + *file.Sha256 + `"`
	c.Set(fiber.HeaderETag, etag)
	if etagMatches(c.Get(fiber.HeaderIfNoneMatch), etag) {
		return c.SendStatus(fiber.StatusNotModified)
	}
	name := export.FileName(bc.Name, bc.Version, f)
	c.Set(fiber.HeaderContentType, f.ContentType())
	c.Set(fiber.HeaderContentDisposition, fmt.Sprintf(`attachment; filename="%s"; filename*=UTF-8''%s`, asciiName(name), url.PathEscape(name)))
	return c.Send(file.Content)
}

// asciiName is the file name for clients that ignore filename*.
func asciiName(s string) string {
	out := []byte{}
	for _, r := range s {
		if r < 0x20 || r > 0x7e || r == '"' || r == '\\' {
			out = append(out, '_')
		} else {
			out = append(out, byte(r))
		}
	}
	return string(out)
}
