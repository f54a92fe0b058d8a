package benchutil

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/valyala/fasthttp"
)

// NewHTTPClient is a keep-alive client that holds one connection per worker.
func NewHTTPClient(workers int) *http.Client {
	return &http.Client{
		Timeout: 30 * time.Second,
		Transport: &http.Transport{
			Proxy:               nil,
			MaxIdleConns:        workers,
			MaxIdleConnsPerHost: workers,
			MaxConnsPerHost:     workers,
			IdleConnTimeout:     90 * time.Second,
			DisableCompression:  true,
		},
	}
}

// HTTPLoad is a closed-loop load: Workers goroutines each send a request,
// wait for the whole response, and send the next. Like pgbench, each worker's
// first Warmup requests are not measured (they open connections and warm the
// service's pool); errors are counted in every phase.
//
// It sends with fasthttp's client, one keep-alive connection per worker and
// the request and response reused: the load tool shares the CPUs with the API
// and PostgreSQL, and net/http's client (two goroutines per connection, a
// request and response allocated per call) took about three times the CPU per
// request, CPU the measured side then lacked.
type HTTPLoad struct {
	// BaseURL is the API's http://host:port; requests carry their path.
	BaseURL string
	Workers int
	Warmup  int // per worker, not measured
	// Exactly one of Duration (the whole run, warm-up included, as pgbench -T)
	// and PerWorker (measured requests per worker after the warm-up, as
	// pgbench -t minus the warm-up) is set.
	Duration  time.Duration
	PerWorker int
	// NewRequest sets request n (0-based, unique across workers) on req:
	// method, path and query, headers, body. req comes reset.
	NewRequest func(n int, req *fasthttp.Request) error
	// OK reports whether a status counts as success (default: 2xx).
	OK func(status int) bool
}

// HTTPResult is what an HTTPLoad measured.
type HTTPResult struct {
	Samples []Sample
	Errors  int
	// ErrorStatus counts failed requests by status (0: transport error).
	ErrorStatus map[int]int
	// ErrorExamples holds the first few failures, for the report.
	ErrorExamples []string
}

// Summary summarizes the result.
func (r *HTTPResult) Summary() Summary { return Summarize(r.Samples, r.Errors) }

// ErrorText describes the failures in one line, or is empty.
func (r *HTTPResult) ErrorText() string {
	if r.Errors == 0 {
		return ""
	}
	codes := make([]int, 0, len(r.ErrorStatus))
	for c := range r.ErrorStatus {
		codes = append(codes, c)
	}
	sort.Ints(codes)
	parts := make([]string, 0, len(codes))
	for _, c := range codes {
		name := fmt.Sprintf("HTTP %d", c)
		if c == 0 {
			name = "transport error"
		}
		parts = append(parts, fmt.Sprintf("%d x %s", r.ErrorStatus[c], name))
	}
	return fmt.Sprintf("%d failed requests (%s); first: %s", r.Errors, strings.Join(parts, ", "), strings.Join(r.ErrorExamples, " | "))
}

const maxErrorExamples = 3

// requestTimeout bounds one request's write and its response's read.
const requestTimeout = 30 * time.Second

// Run applies the load and returns every measured latency.
func (l HTTPLoad) Run(ctx context.Context) (*HTTPResult, error) {
	if l.Workers < 1 || l.BaseURL == "" || l.NewRequest == nil {
		return nil, errors.New("HTTPLoad needs Workers, BaseURL and NewRequest")
	}
	base, err := url.Parse(l.BaseURL)
	if err != nil || base.Scheme != "http" || base.Host == "" {
		return nil, fmt.Errorf("HTTPLoad: BaseURL %q is not http://host:port", l.BaseURL)
	}
	if (l.Duration > 0) == (l.PerWorker > 0) {
		return nil, errors.New("HTTPLoad needs exactly one of Duration and PerWorker")
	}
	client := &fasthttp.HostClient{
		Addr: base.Host, MaxConns: l.Workers, MaxIdleConnDuration: 90 * time.Second,
		ReadTimeout: requestTimeout, WriteTimeout: requestTimeout,
		NoDefaultUserAgentHeader: true, DisablePathNormalizing: true,
	}
	defer client.CloseIdleConnections()
	ok := l.OK
	if ok == nil {
		ok = func(status int) bool { return status >= 200 && status < 300 }
	}
	var (
		mu      sync.Mutex
		res     = &HTTPResult{ErrorStatus: map[int]int{}}
		next    int
		fatal   error
		wg      sync.WaitGroup
		started = time.Now()
	)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	failed := func(status int, detail string) {
		mu.Lock()
		defer mu.Unlock()
		res.Errors++
		res.ErrorStatus[status]++
		if len(res.ErrorExamples) < maxErrorExamples {
			res.ErrorExamples = append(res.ErrorExamples, detail)
		}
	}
	for range l.Workers {
		wg.Go(func() {
			samples := make([]Sample, 0, max(l.PerWorker, 1024))
			req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
			defer fasthttp.ReleaseRequest(req)
			defer fasthttp.ReleaseResponse(resp)
			for i := 0; ; i++ {
				if l.PerWorker > 0 && i >= l.Warmup+l.PerWorker {
					break
				}
				if l.Duration > 0 && time.Since(started) >= l.Duration {
					break
				}
				if ctx.Err() != nil {
					break
				}
				mu.Lock()
				n := next
				next++
				mu.Unlock()
				req.Reset()
				if err := l.NewRequest(n, req); err != nil {
					mu.Lock()
					if fatal == nil {
						fatal = err
					}
					mu.Unlock()
					cancel()
					break
				}
				req.SetHost(base.Host)
				resp.Reset()
				start := time.Now()
				err := client.Do(req, resp)
				end := time.Now()
				if err != nil {
					if ctx.Err() != nil {
						break
					}
					failed(0, err.Error())
					continue
				}
				if status := resp.StatusCode(); !ok(status) {
					failed(status, fmt.Sprintf("%s %s: %d %s", req.Header.Method(), req.URI().Path(), status, truncate(string(resp.Body()), 300)))
					continue
				}
				if i >= l.Warmup {
					samples = append(samples, Sample{Start: start, End: end})
				}
			}
			mu.Lock()
			res.Samples = append(res.Samples, samples...)
			mu.Unlock()
		})
	}
	wg.Wait()
	if fatal != nil {
		return res, fatal
	}
	return res, ctx.Err()
}

func truncate(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
