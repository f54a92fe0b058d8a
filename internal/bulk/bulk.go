// Package bulk holds what bulk import and export share whatever the
// resource: the limits, the options, the record formats (JSON, NDJSON, CSV)
// and the per-row result and summary, and the importers (Importers). The
// rules of each row are those of its single-record route: each importer reads
// a row with the route's reader and writes through its domain's operation or rules.
package bulk

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

const (
	// MaxSyncRows is the most records answered in the request itself; more become a job.
	MaxSyncRows = 10_000
	// MaxRows is the most records one import (a job) may hold.
	MaxRows = 500_000
	// MaxBodyBytes is the payload limit of POST /v1/bulk/import (the rest of the API: 5 MB).
	MaxBodyBytes = 50 << 20
	// ChunkRows is how many records a job processes per transaction.
	ChunkRows = MaxSyncRows
)

// Resource is what an import writes or an export reads.
type Resource string

const (
	Initiatives  Resource = "initiatives"
	Benefits     Resource = "benefits"
	Actuals      Resource = "actuals"
	Costs        Resource = "costs"
	Stakeholders Resource = "stakeholders"
	Engagements  Resource = "engagements"
)

// Resources are the values of `resource`.
var Resources = []Resource{Initiatives, Benefits, Actuals, Costs, Stakeholders, Engagements}

// Mode says what an existing record at a row's key means.
type Mode string

const (
	Create Mode = "create" // an existing record is a row error (code already_exists)
	Upsert Mode = "upsert" // an existing record is updated, or left unchanged when equal
)

var Modes = []Mode{Create, Upsert}

// Status is the outcome of one row.
type Status string

const (
	Created   Status = "created"
	Updated   Status = "updated"
	Unchanged Status = "unchanged"
	Failed    Status = "error"
)

// Options are the choices of one import.
type Options struct {
	Resource Resource
	Mode     Mode
	DryRun   bool // validate and report; write nothing
	Atomic   bool // any row error: write nothing
}

// Actor is who imports: the tenant, the subject recorded on the rows and
// the roles some rules ask for (initiative transitions and owner changes).
type Actor struct {
	TenantID uuid.UUID
	Subject  string
	Roles    []string
}

// Record is one row as sent: a JSON object, field by field.
type Record map[string]json.RawMessage

// FieldError is one element of a row's errors, in the shape of the 422 `errors` array.
type FieldError struct {
	Field   string `json:"field"`
	Code    string `json:"code"`
	Message string `json:"message"`
}

// Result is the outcome of one row. ID is the record's (null for errors,
// and for records a dry run or an aborted atomic import would have created).
type Result struct {
	Index  int          `json:"index"`
	Status Status       `json:"status"`
	ID     *uuid.UUID   `json:"id"`
	Errors []FieldError `json:"errors"`
}

// NewResults are the results of n records numbered from offset (a job's
// chunk starts past 0), each without an outcome or errors yet.
func NewResults(n, offset int) []Result {
	out := make([]Result, n)
	for i := range out {
		out[i] = Result{Index: offset + i, Errors: []FieldError{}}
	}
	return out
}

// Fail marks the row failed with errs.
func (r *Result) Fail(errs []FieldError) { r.Status, r.Errors = Failed, errs }

// Summary counts the outcomes.
type Summary struct {
	Total     int `json:"total"`
	Created   int `json:"created"`
	Updated   int `json:"updated"`
	Unchanged int `json:"unchanged"`
	Failed    int `json:"failed"`
}

// Summarise counts results.
func Summarise(results []Result) Summary {
	s := Summary{Total: len(results)}
	for _, r := range results {
		s.Add(r.Status)
	}
	return s
}

// Add counts one outcome.
func (s *Summary) Add(st Status) {
	switch st {
	case Created:
		s.Created++
	case Updated:
		s.Updated++
	case Unchanged:
		s.Unchanged++
	case Failed:
		s.Failed++
	}
}

// Importer writes records of one resource in the tenant transaction tx, in a
// few multi-row statements, and returns one result per record (Index =
// offset + position). Rows with errors are left out; the caller decides from
// the results whether to keep the writes (dry run, atomic).
type Importer func(ctx context.Context, tx pgx.Tx, a Actor, o Options, records []Record, offset int) ([]Result, error)

// Commit reports whether an import's writes are kept.
func (o Options) Commit(s Summary) bool {
	return !o.DryRun && !(o.Atomic && s.Failed > 0)
}

// --- formats ---

// Format is how records travel.
type Format string

const (
	JSON   Format = "json"   // application/json: {resource, mode, dry_run, atomic, records: [...]}
	NDJSON Format = "ndjson" // application/x-ndjson: one object a line, options in the query
	CSV    Format = "csv"    // text/csv: a header row of field names, options in the query
)

// FormatOf maps a media type (parameters stripped) to a format.
func FormatOf(mediaType string) (Format, bool) {
	switch mediaType {
	case "application/json":
		return JSON, true
	case "application/x-ndjson", "application/ndjson", "application/jsonl":
		return NDJSON, true
	case "text/csv":
		return CSV, true
	}
	return "", false
}

// ParseError is a body that cannot be read as records at all (the API's 400).
type ParseError struct {
	Line    int // 1-based; 0: not about a line
	Message string
}

func (e *ParseError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("line %d: %s", e.Line, e.Message)
	}
	return e.Message
}

// ErrTooManyRows: more than MaxRows records.
var ErrTooManyRows = fmt.Errorf("an import holds at most %d records", MaxRows)

// Records reads the records of a body one at a time, so that an import of
// MaxRows records never holds them all decoded at once: the request keeps at
// most MaxSyncRows+1, and a job stores them chunk by chunk (StartJob).
// Past MaxRows records Next returns ErrTooManyRows; a body that cannot be read
// as records, a *ParseError.
type Records interface {
	// Next returns the next record, or io.EOF after the last.
	Next() (Record, error)
}

// ReadRecords reads up to n records; fewer: the body has no more.
func ReadRecords(r Records, n int) ([]Record, error) {
	var out []Record
	for len(out) < n {
		rec, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		out = append(out, rec)
	}
	return out, nil
}

// Concat reads the records already read, then the rest.
func Concat(read []Record, rest Records) Records { return &concat{read: read, rest: rest} }

type concat struct {
	read []Record
	rest Records
}

func (c *concat) Next() (Record, error) {
	if len(c.read) > 0 {
		r := c.read[0]
		c.read[0], c.read = nil, c.read[1:] // a stored chunk's records can go
		return r, nil
	}
	return c.rest.Next()
}

// NewJSONRecords reads a JSON array of objects element by element.
func NewJSONRecords(raw json.RawMessage) (Records, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('[') {
		return nil, &ParseError{Message: "records must be an array of objects"}
	}
	return &jsonRecords{dec: dec}, nil
}

type jsonRecords struct {
	dec  *json.Decoder
	n    int
	done bool // the closing bracket was read
}

func (j *jsonRecords) Next() (Record, error) {
	if j.done {
		return nil, io.EOF
	}
	if !j.dec.More() {
		if t, err := j.dec.Token(); err != nil || t != json.Delim(']') {
			return nil, &ParseError{Message: "records must be an array of objects"}
		}
		j.done = true
		return nil, io.EOF
	}
	if j.n == MaxRows {
		return nil, ErrTooManyRows
	}
	var r Record
	if err := j.dec.Decode(&r); err != nil || r == nil {
		return nil, &ParseError{Message: fmt.Sprintf("records[%d] must be a JSON object", j.n)}
	}
	j.n++
	return r, nil
}

// ParseNDJSON reads one JSON object per line; blank lines are skipped.
func ParseNDJSON(raw []byte) ([]Record, error) { return ReadRecords(NewNDJSONRecords(raw), MaxRows+1) }

// NewNDJSONRecords reads one JSON object per line, line by line.
func NewNDJSONRecords(raw []byte) Records { return &ndjsonRecords{raw: raw} }

type ndjsonRecords struct {
	raw     []byte
	line, n int
}

func (d *ndjsonRecords) Next() (Record, error) {
	for len(d.raw) > 0 {
		d.line++
		var l []byte
		if i := bytes.IndexByte(d.raw, '\n'); i >= 0 {
			l, d.raw = d.raw[:i], d.raw[i+1:]
		} else {
			l, d.raw = d.raw, nil
		}
		l = bytes.TrimSpace(l)
		if len(l) == 0 {
			continue
		}
		if d.n == MaxRows {
			return nil, ErrTooManyRows
		}
		var r Record
		if err := json.Unmarshal(l, &r); err != nil || r == nil {
			return nil, &ParseError{Line: d.line, Message: "must be one JSON object"}
		}
		d.n++
		return r, nil
	}
	return nil, io.EOF
}

// Kind is how a CSV cell becomes a JSON value.
type Kind int

const (
	Text   Kind = iota // a string
	Number             // a JSON number when it reads as one, else the text (the row's reader reports it)
	Nested             // a JSON array or object when the cell is one (benefits' plan), else the text
)

// Columns are the typed columns of a resource's CSV; any other column is text.
type Columns map[string]Kind

// ParseCSV reads a header row of field names, then one record per row. An
// empty cell is an absent field (export writes null and "" that way).
func ParseCSV(raw []byte, cols Columns) ([]Record, error) {
	r, err := NewCSVRecords(raw, cols)
	if err != nil {
		return nil, err
	}
	return ReadRecords(r, MaxRows+1)
}

// NewCSVRecords reads the header row, then the records row by row (as ParseCSV).
func NewCSVRecords(raw []byte, cols Columns) (Records, error) {
	r := csv.NewReader(bytes.NewReader(raw))
	r.ReuseRecord = true
	header, err := r.Read()
	if err == io.EOF {
		return nil, &ParseError{Line: 1, Message: "the CSV has no header row"}
	}
	if err != nil {
		return nil, csvError(err)
	}
	names := slices.Clone(header)
	for i, h := range names {
		names[i] = strings.TrimSpace(strings.TrimPrefix(h, "\ufeff"))
		if names[i] == "" || slices.Contains(names[:i], names[i]) {
			return nil, &ParseError{Line: 1, Message: fmt.Sprintf("column %d of the header is empty or repeated", i+1)}
		}
	}
	return &csvRecords{r: r, names: names, cols: cols}, nil
}

type csvRecords struct {
	r     *csv.Reader
	names []string
	cols  Columns
	n     int
}

func (c *csvRecords) Next() (Record, error) {
	row, err := c.r.Read()
	if err == io.EOF {
		return nil, io.EOF
	}
	if err != nil {
		return nil, csvError(err)
	}
	if c.n == MaxRows {
		return nil, ErrTooManyRows
	}
	c.n++
	rec := make(Record, len(row))
	for i, cell := range row {
		if cell == "" {
			continue
		}
		rec[c.names[i]] = cellJSON(unneutralise(cell), c.cols[c.names[i]])
	}
	return rec, nil
}

func csvError(err error) error {
	if pe, ok := errors.AsType[*csv.ParseError](err); ok {
		return &ParseError{Line: pe.Line, Message: pe.Err.Error()}
	}
	return &ParseError{Message: err.Error()}
}

func cellJSON(cell string, k Kind) json.RawMessage {
	if k == Nested {
		if t := strings.TrimSpace(cell); (strings.HasPrefix(t, "[") || strings.HasPrefix(t, "{")) && json.Valid([]byte(t)) {
			return json.RawMessage(t)
		}
	}
	if k == Number {
		if f, err := strconv.ParseFloat(cell, 64); err == nil && !strings.ContainsAny(cell, "xXpP_") {
			return strconv.AppendFloat(nil, f, 'g', -1, 64)
		}
	}
	b, _ := json.Marshal(cell)
	return b
}

// --- export ---

// CSVWriter writes records with fixed columns; nil values are empty cells.
type CSVWriter struct {
	w    *csv.Writer
	cols []string
}

// NewCSVWriter writes the header row.
func NewCSVWriter(w io.Writer, cols []string) (*CSVWriter, error) {
	cw := &CSVWriter{w: csv.NewWriter(w), cols: cols}
	return cw, cw.w.Write(cols)
}

// Write writes one record: strings neutralised for spreadsheets
// (neutralise), numbers in their shortest form.
func (c *CSVWriter) Write(values map[string]any) error {
	row := make([]string, len(c.cols))
	for i, col := range c.cols {
		switch v := values[col].(type) {
		case nil:
		case string:
			row[i] = neutralise(v)
		case *string:
			if v != nil {
				row[i] = neutralise(*v)
			}
		case float64:
			row[i] = strconv.FormatFloat(v, 'g', -1, 64)
		case json.RawMessage: // a nested value (benefits' plan), as JSON text
			row[i] = string(v)
		default:
			row[i] = fmt.Sprint(v)
		}
	}
	return c.w.Write(row)
}

// A spreadsheet evaluates a cell that starts with one of these as a formula
// (=1+1, +cmd|..., -2+3, @SUM(...)), and strips a leading tab or carriage
// return before looking (OWASP, "CSV Injection").
const formulaStarts = "=+-@\t\r"

// neutralise makes a text cell inert for a spreadsheet, as OWASP advises: a
// text that would start a formula gets a leading apostrophe, which a
// spreadsheet shows as text and does not evaluate. A decimal number ("-5",
// "+1.5e3") is left alone: it is a number to a spreadsheet, not a formula.
// So that ParseCSV can undo exactly what this did, a text that already
// starts with apostrophes before such a character gets one more.
func neutralise(s string) string {
	if rest := strings.TrimLeft(s, "'"); rest != "" && strings.IndexByte(formulaStarts, rest[0]) >= 0 && !isDecimal(s) {
		return "'" + s
	}
	return s
}

// unneutralise undoes neutralise on an imported cell: one leading apostrophe
// before (more apostrophes and) a formula character is removed. A cell that
// neutralise could not have written is left as it is.
func unneutralise(s string) string {
	if rest := strings.TrimLeft(s, "'"); len(rest) < len(s) && rest != "" && strings.IndexByte(formulaStarts, rest[0]) >= 0 && !isDecimal(s[1:]) {
		return s[1:]
	}
	return s
}

// isDecimal reports a number as a spreadsheet reads one: an optional sign,
// digits with an optional fraction, an optional exponent.
func isDecimal(s string) bool {
	_, err := strconv.ParseFloat(s, 64)
	return err == nil && !strings.ContainsAny(s, "xXpP_nNiI")
}

// Flush flushes the writer.
func (c *CSVWriter) Flush() error {
	c.w.Flush()
	return c.w.Error()
}

// ValidUTF8 reports whether a body is text at all.
func ValidUTF8(raw []byte) bool { return utf8.Valid(raw) }
