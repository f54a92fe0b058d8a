package api

// Bulk import and export (issue 13). The formats, limits, results and the
// importers live in internal/bulk (bulk.Importers); each importer reads a row
// with the reader of its single-record route and writes it through its
// domain's operation or rules. Up to
// bulk.MaxSyncRows records are answered at once; more become a job that the
// bulk-import workflow runs from rows stored in PostgreSQL.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/valyala/fasthttp"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/db/dbsqlc"
	"github.com/valuecase/valuecase/internal/bulk"
	"github.com/valuecase/valuecase/internal/input"
	"github.com/valuecase/valuecase/internal/rbac"
	"github.com/valuecase/valuecase/internal/validation"
	"github.com/valuecase/valuecase/internal/wire"
)

const maxBulkJobPageSize = 500

// bulkResource is what the API knows of one importable resource.
type bulkResource struct {
	read, write rbac.Permission
	columns     bulk.Columns // CSV cell types
	export      []string     // export columns, in order
}

// bulkResources are the importable resources: every value of bulk.Resources.
var bulkResources = map[bulk.Resource]bulkResource{
	bulk.Actuals: {read: rbac.BenefitsRead, write: rbac.BenefitsWrite,
		columns: bulk.Columns{"value": bulk.Number}, export: actualExportColumns},
	bulk.Benefits: {read: rbac.BenefitsRead, write: rbac.BenefitsWrite,
		columns: bulk.Columns{"expected_value": bulk.Number, "plan": bulk.Nested}, export: benefitExportColumns},
	bulk.Stakeholders: {read: rbac.StakeholdersRead, write: rbac.StakeholdersWrite,
		export: stakeholderExportColumns},
	bulk.Initiatives: {read: rbac.InitiativesRead, write: rbac.InitiativesWrite, export: initiativeExportColumns},
	bulk.Costs: {read: rbac.InitiativesRead, write: rbac.InitiativesWrite,
		columns: bulk.Columns{"amount": bulk.Number}, export: costExportColumns},
	bulk.Engagements: {read: rbac.StakeholdersRead, write: rbac.StakeholdersWrite,
		export: engagementExportColumns},
}

// bulkRoutes mounts the bulk group. Permissions depend on the resource, so
// each handler checks the resource's read or write permission itself.
func (s *Server) bulkRoutes(v1 fiber.Router) {
	v1.Post("/bulk/import", s.bulkImport)
	v1.Get("/bulk/export", s.bulkExport)
	v1.Get("/bulk/jobs", s.listBulkJobs)
	v1.Get("/bulk/jobs/:id", s.getBulkJob)
	v1.Get("/bulk/jobs/:id/results", s.bulkJobResults)
}

// bulkBodyLimit is the parser's body limit for a request whose head was
// read: bulk.MaxBodyBytes (50 MB) for POST /v1/bulk/import, the server's
// MaxBodyBytes (5 MB) for everything else. Over it, the parser answers 413
// without reading the body.
func bulkBodyLimit(h *fasthttp.RequestHeader) fasthttp.RequestConfig {
	path, _, _ := strings.Cut(string(h.RequestURI()), "?")
	if string(h.Method()) == fiber.MethodPost && isBulkImportPath(path) {
		return fasthttp.RequestConfig{MaxRequestBodySize: bulk.MaxBodyBytes}
	}
	return fasthttp.RequestConfig{}
}

func isBulkImportPath(p string) bool {
	return strings.EqualFold(strings.TrimRight(p, "/"), "/v1/bulk/import")
}

// --- import ---

// bulkImportJSON is the answer to an import handled in the request.
type bulkImportJSON struct {
	Resource  string        `json:"resource"`
	Mode      string        `json:"mode"`
	DryRun    bool          `json:"dry_run"`
	Atomic    bool          `json:"atomic"`
	Committed bool          `json:"committed"` // false: nothing was written (dry run, or an atomic import with errors)
	Summary   bulk.Summary  `json:"summary"`
	Results   []bulk.Result `json:"results"`
}

var (
	bulkResourceNames = validation.Names(bulk.Resources)
	bulkModeNames     = validation.Names(bulk.Modes)
)

func (s *Server) bulkImport(c *fiber.Ctx) error {
	mt, _, err := mime.ParseMediaType(c.Get(fiber.HeaderContentType))
	format, ok := bulk.FormatOf(mt)
	if err != nil || !ok {
		return newError(http.StatusUnsupportedMediaType, CodeInvalidParameter,
			"request body must be application/json, application/x-ndjson or text/csv")
	}
	if !utf8.Valid(c.Body()) {
		return InvalidParameter("request body is not valid UTF-8")
	}
	o, source, err := readBulkImport(c, format)
	if err != nil {
		return err
	}
	// Up to one record past what is answered at once: more become a job, which reads and
	// stores the rest chunk by chunk instead of holding every record decoded.
	records, err := bulk.ReadRecords(source, bulk.MaxSyncRows+1)
	if err != nil {
		return bulkParseError(err)
	}
	res := bulkResources[o.Resource] // every resource of the enum has one (TestBulkEveryResourceBuilt)
	p := principal(c)
	if !p.Has(res.write) {
		return Forbidden("missing permission %s", res.write)
	}
	if len(records) == 0 { // an empty array, blank NDJSON lines, a CSV header alone: more likely a mistake than a wish
		return InvalidParameter("request body holds no records")
	}
	if len(records) > bulk.MaxSyncRows {
		return s.startBulkJob(c, o, bulk.Concat(records, source))
	}
	ctx := c.UserContext()
	sp, err := requestTx(c).Begin(ctx) // a savepoint: a dry run or a failed atomic import rolls back to it
	if err != nil {
		return err
	}
	defer func() { _ = sp.Rollback(context.WithoutCancel(ctx)) }()
	results, err := bulk.Importers()[o.Resource](ctx, sp, bulk.Actor{TenantID: p.TenantID, Subject: p.Subject, Roles: p.Roles()}, o, records, 0)
	if ce, ok := errors.AsType[*bulk.ConflictError](err); ok {
		return AlreadyExists("%s", ce.Message)
	}
	if err != nil {
		return err
	}
	out := bulkImportJSON{Resource: string(o.Resource), Mode: string(o.Mode), DryRun: o.DryRun, Atomic: o.Atomic,
		Summary: bulk.Summarise(results), Results: results}
	if out.Committed = o.Commit(out.Summary); out.Committed {
		if err := sp.Commit(ctx); err != nil {
			return err
		}
	}
	return c.JSON(out)
}

// readBulkImport reads the options, and opens the records: from a JSON body
// {resource, mode, dry_run, atomic, records}, or from the query for NDJSON and CSV.
func readBulkImport(c *fiber.Ctx, format bulk.Format) (bulk.Options, bulk.Records, error) {
	o := bulk.Options{Mode: bulk.Create}
	q := parseQuery(c)
	if format == bulk.JSON {
		if err := q.done(); err != nil {
			return o, nil, err
		}
		b, err := parseBulkJSONBody(c)
		if err != nil {
			return o, nil, err
		}
		resource := b.Enum("resource", true, bulkResourceNames)
		mode := b.Enum("mode", false, bulkModeNames)
		dry, atomic := b.Boolean("dry_run"), b.Boolean("atomic")
		if !b.Has("records") || b.IsNull("records") {
			b.Fail("records", "required", "is required")
		}
		if err := b.Done(); err != nil {
			return o, nil, err
		}
		o.Resource = bulk.Resource(*resource)
		if mode != nil {
			o.Mode = bulk.Mode(*mode)
		}
		o.DryRun, o.Atomic = dry != nil && *dry, atomic != nil && *atomic
		records, err := bulk.NewJSONRecords(b.Raw("records"))
		return o, records, bulkParseError(err)
	}
	resource, ok := q.str("resource")
	if ok {
		resource = q.oneOf("resource", "", bulkResourceNames)
	}
	o.Mode = bulk.Mode(q.oneOf("mode", string(bulk.Create), bulkModeNames))
	o.DryRun = q.oneOf("dry_run", "false", []string{"true", "false"}) == "true"
	o.Atomic = q.oneOf("atomic", "false", []string{"true", "false"}) == "true"
	if err := q.done(); err != nil {
		return o, nil, err
	}
	if resource == "" {
		return o, nil, InvalidParameter("query parameter resource is required for %s bodies (one of %s)", format, strings.Join(bulkResourceNames, ", "))
	}
	o.Resource = bulk.Resource(resource)
	if format == bulk.NDJSON {
		return o, bulk.NewNDJSONRecords(c.Body()), nil
	}
	records, err := bulk.NewCSVRecords(c.Body(), bulkResources[o.Resource].columns)
	return o, records, bulkParseError(err)
}

// parseBulkJSONBody reads a JSON import's body with parseBody's checks and
// answers, but leaves each field's value where it is in the body instead of
// copying it: the records array may be 50 MB, and is read record by record.
func parseBulkJSONBody(c *fiber.Ctx) (*input.Object, error) {
	raw := bytes.TrimSpace(c.Body())
	if len(raw) == 0 {
		return nil, InvalidParameter("the body must be one JSON object")
	}
	if at := loneSurrogate(raw); at >= 0 {
		return nil, InvalidParameter("request body is not valid UTF-8: a lone surrogate escape at byte %d", at)
	}
	var fields map[string]inPlaceJSON
	if err := json.Unmarshal(raw, &fields); err != nil {
		if _, ok := errors.AsType[*json.UnmarshalTypeError](err); ok {
			return nil, InvalidParameter("request body must be a JSON object")
		}
		if syn, ok := errors.AsType[*json.SyntaxError](err); ok && strings.Contains(syn.Error(), "after top-level value") {
			return nil, InvalidParameter("request body must hold exactly one JSON object")
		}
		return nil, InvalidParameter("request body is not valid JSON: %s", jsonErrorText(err))
	}
	if fields == nil { // the body was `null`
		return nil, InvalidParameter("request body must be a JSON object")
	}
	out := make(map[string]json.RawMessage, len(fields))
	for k, v := range fields {
		out[k] = json.RawMessage(v)
	}
	return input.New(out), nil
}

// inPlaceJSON is a JSON value left in the request body: json.Unmarshal hands
// an Unmarshaler a slice of its input, and the body outlives the handler.
type inPlaceJSON []byte

func (v *inPlaceJSON) UnmarshalJSON(b []byte) error { *v = b; return nil }

// bulkParseError: a body that holds no records is a 400; too many records a 422 on records.
func bulkParseError(err error) error {
	if errors.Is(err, bulk.ErrTooManyRows) {
		return Invalid(FieldError{Field: "records", Code: "too_many", Message: err.Error()})
	}
	if pe, ok := errors.AsType[*bulk.ParseError](err); ok {
		return InvalidParameter("request body: %s", pe.Error())
	}
	return err
}

// --- jobs ---

// bulkJobJSON is a bulk import job.
type bulkJobJSON struct {
	ID          string       `json:"id"`
	Resource    string       `json:"resource"`
	Mode        string       `json:"mode"`
	DryRun      bool         `json:"dry_run"`
	Atomic      bool         `json:"atomic"`
	Status      string       `json:"status"`
	Progress    int          `json:"progress"` // percent of rows processed
	Processed   int          `json:"processed"`
	Summary     bulk.Summary `json:"summary"`
	Committed   *bool        `json:"committed"` // null until the job finished
	Error       *string      `json:"error"`
	RequestedBy string       `json:"requested_by"`
	CreatedAt   string       `json:"created_at"`
	StartedAt   *string      `json:"started_at"`
	FinishedAt  *string      `json:"finished_at"`
	ResultsURL  string       `json:"results_url"`
}

func toBulkJobJSON(j dbsqlc.BulkJob) bulkJobJSON {
	out := bulkJobJSON{ID: j.ID.String(), Resource: j.Resource, Mode: j.Mode, DryRun: j.DryRun, Atomic: j.Atomic,
		Status: j.Status, Processed: int(j.Processed),
		Summary: bulk.Summary{Total: int(j.Total), Created: int(j.Created), Updated: int(j.Updated), Unchanged: int(j.Unchanged), Failed: int(j.Failed)},
		Error:   j.Error, RequestedBy: j.RequestedBy, CreatedAt: wire.Timestamp(j.CreatedAt), StartedAt: optTimestamp(j.StartedAt),
		FinishedAt: optTimestamp(j.FinishedAt), ResultsURL: "/v1/bulk/jobs/" + j.ID.String() + "/results"}
	if j.Total > 0 {
		out.Progress = int(j.Processed * 100 / j.Total)
	} else if j.Status == "succeeded" {
		out.Progress = 100
	}
	if j.Status == "succeeded" || j.Status == "failed" {
		o := bulk.Options{DryRun: j.DryRun, Atomic: j.Atomic}
		out.Committed = new(j.Status == "succeeded" && o.Commit(out.Summary))
	}
	return out
}

// startBulkJob stores the job and its rows with the event that starts the
// workflow (bulk.StartJob), and answers 202 with where to follow it.
func (s *Server) startBulkJob(c *fiber.Ctx, o bulk.Options, records bulk.Records) error {
	p := principal(c)
	job, err := bulk.StartJob(c.UserContext(), requestTx(c), bulk.Actor{TenantID: p.TenantID, Subject: p.Subject, Roles: p.Roles()}, o, records)
	if err != nil {
		return bulkParseError(err) // a record past the first chunk may not read: the transaction writes nothing
	}
	c.Location("/v1/bulk/jobs/" + job.ID.String())
	return c.Status(fiber.StatusAccepted).JSON(toBulkJobJSON(job))
}

// readableBulkResources are the resources whose jobs and exports the caller may read.
func readableBulkResources(p *Principal) []string {
	var out []string
	for r, br := range bulkResources {
		if p.Has(br.read) {
			out = append(out, string(r))
		}
	}
	slices.Sort(out)
	return out
}

func (s *Server) listBulkJobs(c *fiber.Ctx) error {
	q := parseQuery(c)
	page, size := q.page(maxBulkJobPageSize)
	if err := q.done(); err != nil {
		return err
	}
	ctx, p, tx := c.UserContext(), principal(c), requestTx(c)
	readable := readableBulkResources(p)
	rows, err := db.Q.BulkJobList(ctx, tx, dbsqlc.BulkJobListParams{TenantID: p.TenantID, Resources: readable,
		PageLimit: int32(size), PageOffset: int32((page - 1) * size)})
	if err != nil {
		return err
	}
	return paginate(c, page, size, rows,
		func(r dbsqlc.BulkJobListRow) int64 { return r.TotalCount },
		func(r dbsqlc.BulkJobListRow) bulkJobJSON { return toBulkJobJSON(r.BulkJob) },
		func() (int64, error) {
			return db.Q.BulkJobCount(ctx, tx, dbsqlc.BulkJobCountParams{TenantID: p.TenantID, Resources: readable})
		})
}

// loadBulkJob finds a job the caller may read (another tenant's, or one of a
// resource the caller cannot read: 404).
func loadBulkJob(c *fiber.Ctx) (dbsqlc.BulkJob, error) {
	id, err := pathID(c, "id", "bulk job")
	if err != nil {
		return dbsqlc.BulkJob{}, err
	}
	p := principal(c)
	j, err := db.Q.BulkJobGet(c.UserContext(), requestTx(c), dbsqlc.BulkJobGetParams{TenantID: p.TenantID, ID: id})
	if err == nil && !slices.Contains(readableBulkResources(p), j.Resource) {
		err = pgx.ErrNoRows
	}
	return j, found("bulk job", err)
}

func (s *Server) getBulkJob(c *fiber.Ctx) error {
	if err := parseQuery(c).done(); err != nil {
		return err
	}
	j, err := loadBulkJob(c)
	if err != nil {
		return err
	}
	return c.JSON(toBulkJobJSON(j))
}

func (s *Server) bulkJobResults(c *fiber.Ctx) error {
	q := parseQuery(c)
	page, size := q.page(maxBulkJobPageSize)
	if err := q.done(); err != nil {
		return err
	}
	j, err := loadBulkJob(c)
	if err != nil {
		return err
	}
	ctx, tx := c.UserContext(), requestTx(c)
	rows, err := db.Q.BulkJobResults(ctx, tx, dbsqlc.BulkJobResultsParams{TenantID: j.TenantID, JobID: j.ID,
		PageLimit: int32(size), PageOffset: int32((page - 1) * size)})
	if err != nil {
		return err
	}
	return paginate(c, page, size, rows,
		func(r dbsqlc.BulkJobResultsRow) int64 { return r.Total },
		func(r dbsqlc.BulkJobResultsRow) bulk.Result {
			var out bulk.Result
			_ = json.Unmarshal(r.Result, &out) // bulk.record wrote it
			if out.Errors == nil {
				out.Errors = []bulk.FieldError{}
			}
			return out
		},
		func() (int64, error) {
			return db.Q.BulkJobResultCount(ctx, tx, dbsqlc.BulkJobResultCountParams{TenantID: j.TenantID, JobID: j.ID})
		})
}

// --- export ---

// bulkExportCursor and bulkExportPage page through a resource's records in
// key order; each record is a map of the export columns.
type bulkExportCursor struct {
	ctx    context.Context
	tx     pgx.Tx
	tenant uuid.UUID
	after  []any // the last key read; nil: from the start
}

type bulkExportPage struct {
	records []map[string]any
	after   []any
	err     error
}

// bulkExporters page through each exportable resource.
var bulkExporters = map[bulk.Resource]func(bulkExportCursor) bulkExportPage{
	bulk.Actuals:      exportActuals,
	bulk.Stakeholders: exportStakeholders,
	bulk.Benefits:     exportBenefits,
	bulk.Initiatives:  exportInitiatives,
	bulk.Costs:        exportCosts,
	bulk.Engagements:  exportEngagements,
}

const bulkExportPageSize = 5000

func (s *Server) bulkExport(c *fiber.Ctx) error {
	q := parseQuery(c)
	resource, _ := q.str("resource")
	if resource != "" {
		resource = q.oneOf("resource", "", bulkResourceNames)
	}
	format, hasFormat := q.str("format")
	if hasFormat {
		format = q.oneOf("format", "", []string{"ndjson", "csv"})
	}
	if err := q.done(); err != nil {
		return err
	}
	if resource == "" {
		return InvalidParameter("query parameter resource is required (one of %s)", strings.Join(bulkResourceNames, ", "))
	}
	if !hasFormat {
		switch c.Accepts("application/x-ndjson", "text/csv") {
		case "text/csv":
			format = "csv"
		case "application/x-ndjson":
			format = "ndjson"
		default:
			return newError(http.StatusNotAcceptable, CodeInvalidParameter, "the export is application/x-ndjson or text/csv (Accept or format=)")
		}
	}
	br, exporter := bulkResources[bulk.Resource(resource)], bulkExporters[bulk.Resource(resource)]
	p := principal(c)
	if !p.Has(br.read) {
		return Forbidden("missing permission %s", br.read)
	}
	// The request's transaction ends here; the stream reads in a snapshot of its own.
	if err := endTx(c); err != nil {
		return err
	}
	if format == "csv" {
		c.Set(fiber.HeaderContentType, "text/csv; charset=utf-8")
	} else {
		c.Set(fiber.HeaderContentType, "application/x-ndjson")
	}
	c.Set(fiber.HeaderContentDisposition, fmt.Sprintf(`attachment; filename="%s.%s"`, resource, format))
	pool, tenant, cols, log, rid := s.Pool, p.TenantID, br.export, s.log, requestID(c)
	c.Context().SetBodyStreamWriter(fasthttp.StreamWriter(func(w *bufio.Writer) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		// One read-only snapshot: the export is one consistent state however many pages it takes.
		err := db.InTenant(ctx, db.Snapshot{Pool: pool}, tenant, func(tx pgx.Tx) error {
			return writeBulkExport(ctx, tx, tenant, exporter, format, cols, w)
		})
		if err != nil {
			// The status is sent: the stream ends short, and the log says why.
			log.Error("bulk export failed mid-stream", "request_id", rid, "tenant_id", tenant, "resource", resource, "error", err)
		}
	}))
	return nil
}

func writeBulkExport(ctx context.Context, tx pgx.Tx, tenant uuid.UUID, exporter func(bulkExportCursor) bulkExportPage,
	format string, cols []string, w *bufio.Writer) error {
	var cw *bulk.CSVWriter
	if format == "csv" {
		var err error
		if cw, err = bulk.NewCSVWriter(w, cols); err != nil {
			return err
		}
	}
	cur := bulkExportCursor{ctx: ctx, tx: tx, tenant: tenant}
	for {
		page := exporter(cur)
		if page.err != nil {
			return page.err
		}
		for _, r := range page.records {
			if cw != nil {
				if err := cw.Write(r); err != nil {
					return err
				}
				continue
			}
			line, err := json.Marshal(r)
			if err != nil {
				return err
			}
			_, _ = w.Write(line)
			_ = w.WriteByte('\n')
		}
		if cw != nil {
			if err := cw.Flush(); err != nil {
				return err
			}
		}
		if err := w.Flush(); err != nil {
			return err // the client went away
		}
		if len(page.records) < bulkExportPageSize {
			return nil
		}
		cur.after = page.after
	}
}
