package dashboard

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/db/dbsqlc"
)

// ErrNotFound: no dashboard of that id the caller may see (another user's
// personal dashboard is not found, never forbidden).
var ErrNotFound = errors.New("dashboard not found")

// Fields are what a create or a replace writes.
type Fields struct {
	Name, Description string
	Visibility        Visibility
	Widgets           []Widget // read by ReadWidget already
}

// Create writes a new dashboard of the caller: its owner is the caller
// (CheckWrite), who may own at most MaxPerOwner. Two creates of one owner
// serialise on a transaction lock, so the count is exact.
func Create(ctx context.Context, tx pgx.Tx, tenant uuid.UUID, caller Caller, f Fields) (dbsqlc.Dashboard, error) {
	owner, err := CheckWrite(nil, f.Visibility, caller)
	if err != nil {
		return dbsqlc.Dashboard{}, err
	}
	if err := db.Q.DashboardOwnerLock(ctx, tx, dbsqlc.DashboardOwnerLockParams{TenantID: tenant, OwnerID: owner}); err != nil {
		return dbsqlc.Dashboard{}, err
	}
	n, err := db.Q.DashboardCountByOwner(ctx, tx, dbsqlc.DashboardCountByOwnerParams{TenantID: tenant, OwnerID: owner})
	if err != nil {
		return dbsqlc.Dashboard{}, err
	}
	if err := CheckCanAdd(n); err != nil {
		return dbsqlc.Dashboard{}, err
	}
	widgets, err := json.Marshal(f.Widgets)
	if err != nil {
		return dbsqlc.Dashboard{}, err
	}
	return db.Q.DashboardCreate(ctx, tx, dbsqlc.DashboardCreateParams{TenantID: tenant, Name: f.Name, Description: f.Description,
		Visibility: string(f.Visibility), OwnerID: owner, Widgets: widgets})
}

// locked finds a dashboard the caller may see, locked for a write.
func locked(ctx context.Context, tx pgx.Tx, tenant uuid.UUID, caller Caller, id uuid.UUID) (dbsqlc.Dashboard, error) {
	d, err := db.Q.DashboardGetLocked(ctx, tx, dbsqlc.DashboardGetLockedParams{TenantID: tenant, ID: id, Subject: caller.Subject})
	if db.IsNotFound(err) {
		return d, ErrNotFound
	}
	return d, err
}

// Replace writes f over the dashboard id (PUT): who may is CheckWrite's rule.
func Replace(ctx context.Context, tx pgx.Tx, tenant uuid.UUID, caller Caller, id uuid.UUID, f Fields) (dbsqlc.Dashboard, error) {
	cur, err := locked(ctx, tx, tenant, caller, id)
	if err != nil {
		return cur, err
	}
	owner, err := CheckWrite(&Dashboard{Visibility: Visibility(cur.Visibility), OwnerID: cur.OwnerID}, f.Visibility, caller)
	if err != nil {
		return dbsqlc.Dashboard{}, err
	}
	widgets, err := json.Marshal(f.Widgets)
	if err != nil {
		return dbsqlc.Dashboard{}, err
	}
	return db.Q.DashboardUpdate(ctx, tx, dbsqlc.DashboardUpdateParams{TenantID: cur.TenantID, ID: cur.ID, Name: f.Name,
		Description: f.Description, Visibility: string(f.Visibility), OwnerID: owner, Widgets: widgets})
}

// Delete removes the dashboard id: who may is CheckWrite's rule.
func Delete(ctx context.Context, tx pgx.Tx, tenant uuid.UUID, caller Caller, id uuid.UUID) error {
	cur, err := locked(ctx, tx, tenant, caller, id)
	if err != nil {
		return err
	}
	if _, err := CheckWrite(&Dashboard{Visibility: Visibility(cur.Visibility), OwnerID: cur.OwnerID}, Visibility(cur.Visibility), caller); err != nil {
		return err
	}
	return db.Q.DashboardDelete(ctx, tx, dbsqlc.DashboardDeleteParams{TenantID: cur.TenantID, ID: cur.ID})
}
