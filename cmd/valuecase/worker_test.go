package main

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/valuecase/valuecase/db/dbtest"
	"github.com/valuecase/valuecase/internal/testenv"
)

// The worker process serves /metrics (its pool and the Temporal SDK's metrics, which the
// workers produce while polling) and /health on WORKER_HTTP_ADDR, like the API does on its port.
func TestWorkerServesMetricsAndHealth(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	t.Setenv("DATABASE_URL", dbtest.URL(t))
	t.Setenv("TEMPORAL_ADDRESS", testenv.TemporalAddress(t))
	t.Setenv("WORKER_HTTP_ADDR", addr)
	t.Setenv("AUTH_SIGNING_KEYS_DIR", t.TempDir())
	t.Setenv("LOG_LEVEL", "error")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- runWorker(ctx, nil) }()
	defer func() {
		cancel()
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) { // canceled: this test stopped it
			t.Errorf("the worker stopped with %v", err)
		}
	}()

	get := func(path string) (int, string) {
		res, err := http.Get("http://" + addr + path)
		if err != nil {
			return 0, ""
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	testenv.Eventually(t, 30*time.Second, "the worker's /metrics with Temporal poller metrics", func() bool {
		code, body := get("/metrics")
		return code == 200 && strings.Contains(body, "valuecase_db_pool_acquired_conns") && strings.Contains(body, "temporal_")
	})
	if code, body := get("/health"); code != 200 || !strings.Contains(body, `"postgres":{"status":"up"}`) {
		t.Errorf("/health: %d %s", code, body)
	}
}
