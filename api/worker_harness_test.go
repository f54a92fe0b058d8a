package api_test

import (
	"context"
	"sync"
	"testing"

	"github.com/valuecase/valuecase/internal/config"
	"github.com/valuecase/valuecase/worker"
)

// testConfig is the configuration the processes load from the environment,
// for a test to adjust before it starts one.
func testConfig(t testing.TB) config.Config {
	t.Helper()
	cfg, err := config.Load()
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// runWorker runs w (the real worker: Temporal workers and the outbox relay)
// until stop is called or the test ends; stop waits for it to return, and
// may be called again.
func runWorker(t testing.TB, w *worker.Worker) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = w.Run(ctx) }()
	var once sync.Once
	stop = func() { once.Do(func() { cancel(); <-done }) }
	t.Cleanup(stop)
	return stop
}
