package benchutil

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"
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
type HTTPLoad struct {
	Client  *http.Client
	Workers int
	Warmup  int // per worker, not measured
	// Exactly one of Duration (the whole run, warm-up included, as pgbench -T)
	// and PerWorker (measured requests per worker after the warm-up, as
	// pgbench -t minus the warm-up) is set.
	Duration  time.Duration
	PerWorker int
	// NewRequest builds request n (0-based, unique across workers).
	NewRequest func(ctx context.Context, n int) (*http.Request, error)
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

// Run applies the load and returns every measured latency.
func (l HTTPLoad) Run(ctx context.Context) (*HTTPResult, error) {
	if l.Workers < 1 || l.Client == nil || l.NewRequest == nil {
		return nil, errors.New("HTTPLoad needs Workers, Client and NewRequest")
	}
	if (l.Duration > 0) == (l.PerWorker > 0) {
		return nil, errors.New("HTTPLoad needs exactly one of Duration and PerWorker")
	}
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
				req, err := l.NewRequest(ctx, n)
				if err != nil {
					mu.Lock()
					if fatal == nil {
						fatal = err
					}
					mu.Unlock()
					cancel()
					break
				}
				start := time.Now()
				resp, err := l.Client.Do(req)
				if err != nil {
					if ctx.Err() != nil {
						break
					}
					failed(0, err.Error())
					continue
				}
				body, err := io.ReadAll(resp.Body)
				_ = resp.Body.Close()
				end := time.Now()
				if err != nil {
					failed(0, "reading the response: "+err.Error())
					continue
				}
				if !ok(resp.StatusCode) {
					failed(resp.StatusCode, fmt.Sprintf("%s %s: %d %s", req.Method, req.URL.Path, resp.StatusCode, truncate(string(body), 300)))
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
