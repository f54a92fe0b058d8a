package benchutil

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// Queries are the sqlc named queries of db/queries/*.sql, by name, as the
// service runs them (comment lines dropped, no trailing semicolon).
type Queries map[string]string

var (
	nameLine  = regexp.MustCompile(`^--\s*name:\s*(\w+)`)
	sqlcEmbed = regexp.MustCompile(`sqlc\.embed\(\s*(\w+)\s*\)`)
)

// LoadQueries reads every *.sql file of dir. A query is the text between its
// `-- name: X ...` line and the next one (or the end of the file).
func LoadQueries(dir string) (Queries, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.sql"))
	if err != nil {
		return nil, err
	}
	if len(paths) == 0 {
		return nil, fmt.Errorf("no *.sql files in %s", dir)
	}
	q := Queries{}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		if err := q.parse(p, string(b)); err != nil {
			return nil, err
		}
	}
	return q, nil
}

func (q Queries) parse(file, text string) error {
	var name string
	var body []string
	flush := func() error {
		if name == "" {
			return nil
		}
		sql := strings.TrimSpace(strings.Join(body, "\n"))
		sql = strings.TrimSpace(strings.TrimSuffix(sql, ";"))
		// sqlc writes sqlc.embed(t) out as t's columns in table order: t.* is the same.
		sql = sqlcEmbed.ReplaceAllString(sql, "$1.*")
		if sql == "" {
			return fmt.Errorf("%s: query %s is empty", file, name)
		}
		if _, dup := q[name]; dup {
			return fmt.Errorf("%s: query %s defined twice", file, name)
		}
		q[name] = sql
		return nil
	}
	for line := range strings.SplitSeq(text, "\n") {
		if m := nameLine.FindStringSubmatch(line); m != nil {
			if err := flush(); err != nil {
				return err
			}
			name, body = m[1], nil
			continue
		}
		if strings.HasPrefix(strings.TrimSpace(line), "--") || name == "" {
			continue
		}
		body = append(body, strings.TrimRight(line, " \t\r"))
	}
	return flush()
}

// Get returns a query by name.
func (q Queries) Get(name string) (string, error) {
	sql, ok := q[name]
	if !ok {
		return "", fmt.Errorf("no query named %s in db/queries", name)
	}
	return sql, nil
}

// sqlcParam matches the three ways a sqlc query names a parameter.
var sqlcParam = regexp.MustCompile(`sqlc\.n?arg\(\s*'(\w+)'\s*\)|sqlc\.n?arg\(\s*(\w+)\s*\)|@(\w+)`)

// Params lists the parameter names a query uses, sorted.
func Params(sql string) []string {
	seen := map[string]bool{}
	for _, m := range sqlcParam.FindAllStringSubmatch(sql, -1) {
		seen[m[1]+m[2]+m[3]] = true
	}
	out := make([]string, 0, len(seen))
	for n := range seen {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Null stands for a NULL parameter in a pgbench script. pgbench cannot send
// NULL as a parameter, and a literal NULL is no substitute: the planner folds
// it (a filter "$1 IS NULL OR x = $1" vanishes, an EXISTS on "id = NULL" is
// never run), so the baseline would run a cheaper plan than the API's
// statement with a NULL parameter (measured: 6-7 % more transactions/s on
// the initiatives list). NULLIF of a parameter is NULL when the statement
// runs but unknown when a generic plan is made, as pgx's NULL parameter is;
// custom plans fold both alike. Its type is text unless the SQL casts it
// (append "::date" where nothing else gives the type). Every script defines
// the variable, and PGBench sends its value.
const Null = "NULLIF(:" + nullVar + ", '-')"

// nullVar is Null's variable; its value "-" is what NULLIF turns into NULL.
const nullVar, nullValue = "null_param", "-"

// Bind turns a sqlc query into pgbench SQL: each parameter x becomes the
// pgbench variable :x, unless bind maps x to something else (another
// variable such as ":ins_id", a literal, or Null).
func Bind(sql string, bind map[string]string) string {
	return sqlcParam.ReplaceAllStringFunc(sql, func(m string) string {
		sub := sqlcParam.FindStringSubmatch(m)
		name := sub[1] + sub[2] + sub[3]
		if v, ok := bind[name]; ok {
			return v
		}
		return ":" + name
	})
}

// Script builds a pgbench custom script and checks that every variable its
// SQL uses is defined (pgbench would otherwise send ":x" as SQL text).
type Script struct {
	lines   []string
	defined map[string]bool
	// prefixes of variables defined by \gset
	prefixes []string
	errs     []string
}

// NewScript starts a script whose variables include the given ones (set with
// pgbench -D, or pgbench's own client_id, scale, random_seed, and Null's).
func NewScript(vars ...string) *Script {
	s := &Script{defined: map[string]bool{"client_id": true, "scale": true, "random_seed": true, nullVar: true}}
	for _, v := range vars {
		s.defined[v] = true
	}
	return s
}

var setLine = regexp.MustCompile(`^\\set\s+(\w+)\s`)

// Meta adds a meta-command line such as `\set r random(1, 10)`.
func (s *Script) Meta(line string) *Script {
	if m := setLine.FindStringSubmatch(line); m != nil {
		s.defined[m[1]] = true
	}
	s.lines = append(s.lines, line)
	return s
}

// SQL adds one statement (without its trailing semicolon).
func (s *Script) SQL(sql string) *Script { return s.add(sql, ";") }

// SQLGset adds one statement that returns exactly one row, whose columns
// become the variables prefix+column.
func (s *Script) SQLGset(sql, prefix string) *Script {
	s.add(sql, ` \gset `+prefix)
	s.prefixes = append(s.prefixes, prefix)
	return s
}

var pgbenchVar = regexp.MustCompile(`(^|[^:]):([A-Za-z_]\w*)`)

func (s *Script) add(sql, end string) *Script {
	for _, m := range pgbenchVar.FindAllStringSubmatch(sql, -1) {
		if !s.isDefined(m[2]) {
			s.errs = append(s.errs, fmt.Sprintf("variable :%s is not defined before %q", m[2], firstLine(sql)))
		}
	}
	s.lines = append(s.lines, strings.TrimRight(sql, "; \n")+end)
	return s
}

func (s *Script) isDefined(v string) bool {
	if s.defined[v] {
		return true
	}
	for _, p := range s.prefixes {
		if strings.HasPrefix(v, p) {
			return true
		}
	}
	return false
}

// String is the script text.
func (s *Script) String() string { return strings.Join(s.lines, "\n") + "\n" }

// Write checks the script and writes it to path.
func (s *Script) Write(path string) error {
	if len(s.errs) > 0 {
		return fmt.Errorf("pgbench script %s: %s", path, strings.Join(s.errs, "; "))
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, []byte(s.String()), 0o644)
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return l
}

// Positional turns the $1, $2, ... of a hand-written statement (such as
// db.SetTenantSQL) into the pgbench variables vars[0], vars[1], ...
func Positional(sql string, vars ...string) string {
	for i := len(vars); i >= 1; i-- { // $10 before $1
		sql = strings.ReplaceAll(sql, fmt.Sprintf("$%d", i), ":"+vars[i-1])
	}
	return sql
}
