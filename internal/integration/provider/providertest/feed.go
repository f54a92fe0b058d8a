package providertest

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"testing"
	"time"
)

// Feed is a fake http_feed source at URL (path /feed). Record i is the row
// benefit_key "B-<i/12>", period 2025-<i%12+1>, value "<i*37>.<i%100>"
// (FeedRow), evidence_url on even rows. It answers ?since=<RFC 3339> with
// the rows modified after it, and pages JSON by ?page=N with a relative next.
type Feed struct {
	*base
	noAuth bool
}

// SetNoAuth makes the feed open (no Authorization needed).
func (f *Feed) SetNoAuth(v bool) { f.mu.Lock(); defer f.mu.Unlock(); f.noAuth = v }

// NewFeed starts a fake feed. Options.PageSize defaults to 500 rows (JSON
// pages); "array" and "csv" formats serve every row in one document.
func NewFeed(t testing.TB, o Options) *Feed {
	f := &Feed{}
	f.base = newBase(t, o, http.HandlerFunc(f.serve))
	f.URL = f.srv.URL + "/feed"
	return f
}

// FeedRow is the row of good record i: benefit key, period, value and
// evidence URL ("" on odd rows).
func FeedRow(i int) (key, period, value, evidence string) {
	key = fmt.Sprintf("B-%d", i/12)
	period = fmt.Sprintf("2025-%02d", i%12+1)
	value = fmt.Sprintf("%d.%02d", i*37, i%100)
	if i%2 == 0 {
		evidence = fmt.Sprintf("https://evidence.example.com/r/%d", i)
	}
	return
}

func (f *Feed) serve(w http.ResponseWriter, r *http.Request) {
	if f.count(w, r, func(w http.ResponseWriter, fl Failure, msg string) {
		if msg == "" {
			msg = fmt.Sprintf("fake failure %d", fl.Status)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(fl.Status)
		_ = json.NewEncoder(w).Encode(map[string]string{"error": msg})
	}) {
		return
	}
	if r.URL.Path != "/feed" || r.Method != http.MethodGet {
		http.NotFound(w, r)
		return
	}
	f.mu.Lock()
	open := f.noAuth
	f.mu.Unlock()
	if !open && !f.bearerOK(bearer(r)) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("WWW-Authenticate", `Bearer realm="feed"`)
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = w.Write([]byte(`{"error":"invalid or missing bearer token"}`))
		return
	}
	var since time.Time
	if s := r.URL.Query().Get("since"); s != "" {
		t, err := time.Parse(time.RFC3339, s)
		if err != nil {
			http.Error(w, "bad since", http.StatusBadRequest)
			return
		}
		since = t
	}
	idx := f.matching(since)
	switch f.opts.Format {
	case "csv":
		f.serveCSV(w, idx)
	case "array":
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		_ = json.NewEncoder(w).Encode(f.rows(idx))
	default:
		size := f.opts.PageSize
		if size <= 0 {
			size = 500
		}
		page := atoiDefault(r.URL.Query().Get("page"), 1)
		if page < 1 {
			page = 1
		}
		lo := min((page-1)*size, len(idx))
		hi := min(lo+size, len(idx))
		body := map[string]any{"data": f.rows(idx[lo:hi])}
		if hi < len(idx) {
			q := url.Values{"page": {strconv.Itoa(page + 1)}}
			if s := r.URL.Query().Get("since"); s != "" {
				q.Set("since", s)
			}
			body["next"] = "/feed?" + q.Encode()
		} else {
			body["next"] = nil
		}
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		_ = json.NewEncoder(w).Encode(body)
	}
}

func (f *Feed) rows(idx []int) []any {
	out := make([]any, 0, len(idx))
	for _, i := range idx {
		k, p, v, e := FeedRow(i)
		if f.isBad(i) {
			switch i % 4 {
			case 0:
				out = append(out, map[string]any{"benefit_key": k, "period": "2025-13", "value": v})
			case 1:
				out = append(out, map[string]any{"benefit_key": k, "period": p, "value": "12,5"})
			case 2:
				out = append(out, map[string]any{"period": p, "value": v})
			default:
				out = append(out, map[string]any{"benefit_key": k, "period": p, "value": true})
			}
			continue
		}
		row := map[string]any{"benefit_key": k, "period": p, "value": json.Number(v)}
		if e != "" {
			row["evidence_url"] = e
		}
		out = append(out, row)
	}
	return out
}

func (f *Feed) serveCSV(w http.ResponseWriter, idx []int) {
	var buf bytes.Buffer
	cw := csv.NewWriter(&buf)
	_ = cw.Write([]string{"benefit_key", "period", "value", "evidence_url"})
	for _, i := range idx {
		k, p, v, e := FeedRow(i)
		if f.isBad(i) {
			switch i % 4 {
			case 0:
				_ = cw.Write([]string{k, "2025-13", v, e})
			case 1:
				_ = cw.Write([]string{k, p, "abc", e})
			case 2:
				_ = cw.Write([]string{"", p, v, e})
			default:
				_ = cw.Write([]string{k, p})
			}
			continue
		}
		_ = cw.Write([]string{k, p, v, e})
	}
	cw.Flush()
	w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	_, _ = w.Write(buf.Bytes())
}
