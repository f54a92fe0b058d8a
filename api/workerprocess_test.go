package api_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"

	"github.com/valuecase/valuecase/internal/testenv"
)

var (
	valuecaseBinOnce sync.Once
	valuecaseBin     string
	valuecaseBinErr  error
)

// startWorkerProcess runs `valuecase worker` (built once per test binary) on
// the test server's database and the dev server, with env added, and returns
// kill: SIGKILL, the way a crashed machine takes a worker away (its activity
// attempts are retried once their heartbeat times out).
func startWorkerProcess(t *testing.T, ts *testServer, env ...string) (kill func()) {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	valuecaseBinOnce.Do(func() {
		dir, err := os.MkdirTemp("", "valuecase-bin")
		if err != nil {
			valuecaseBinErr = err
			return
		}
		valuecaseBin = filepath.Join(dir, "valuecase")
		if out, err := exec.Command("go", "build", "-o", valuecaseBin, "github.com/valuecase/valuecase/cmd/valuecase").CombinedOutput(); err != nil {
			valuecaseBinErr = err
			t.Logf("go build:\n%s", out)
		}
	})
	if valuecaseBinErr != nil {
		t.Fatalf("go build: %v", valuecaseBinErr)
	}
	cmd := exec.Command(valuecaseBin, "worker")
	cmd.Env = append(append(os.Environ(), "DATABASE_URL="+ts.pool.Config().ConnString(), "TEMPORAL_ADDRESS="+testenv.TemporalAddress(t),
		"WORKER_HTTP_ADDR=127.0.0.1:0", "LOG_LEVEL=error", "AUTH_SIGNING_KEYS_DIR="+t.TempDir()), env...)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	kill = func() { once.Do(func() { _ = cmd.Process.Signal(syscall.SIGKILL); _ = cmd.Wait() }) }
	t.Cleanup(kill)
	return kill
}
