// Package testenv starts the real services integration tests need: one
// Temporal dev server per test binary.
package testenv

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"

	"github.com/valuecase/valuecase/internal/runs"
)

var (
	temporalOnce sync.Once
	temporalAddr string
	temporalErr  error
)

// TemporalAddress returns the host:port of a Temporal dev server (namespace
// "default") started once for this test binary and killed when it exits.
// It uses bin/temporal (built by `make test-deps`) or $TEMPORAL_CLI.
func TemporalAddress(t testing.TB) string {
	t.Helper()
	temporalOnce.Do(func() { temporalAddr, temporalErr = startTemporal() })
	if temporalErr != nil {
		t.Fatalf("Temporal dev server: %v", temporalErr)
	}
	return temporalAddr
}

// TemporalClient returns a client of the shared dev server, closed with the test.
func TemporalClient(t testing.TB) client.Client {
	t.Helper()
	c, err := client.Dial(client.Options{HostPort: TemporalAddress(t), Namespace: "default",
		ConnectionOptions: client.ConnectionOptions{DialOptions: runs.ScheduleConflictDialOptions()}}) // as worker.DialTemporal
	if err != nil {
		t.Fatalf("dial Temporal: %v", err)
	}
	t.Cleanup(c.Close)
	return c
}

func temporalCLI() (string, error) {
	if p := os.Getenv("TEMPORAL_CLI"); p != "" {
		return p, nil
	}
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			p := filepath.Join(dir, "bin", "temporal")
			if _, err := os.Stat(p); err != nil {
				return "", fmt.Errorf("%s is missing: run `make test-deps` (or set TEMPORAL_CLI)", p)
			}
			return p, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod above the test's directory")
		}
		dir = parent
	}
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

func startTemporal() (string, error) {
	cli, err := temporalCLI()
	if err != nil {
		return "", err
	}
	port, err := freePort()
	if err != nil {
		return "", err
	}
	httpPort, err := freePort()
	if err != nil {
		return "", err
	}
	metricsPort, err := freePort()
	if err != nil {
		return "", err
	}
	args := append([]string{"server", "start-dev", "--headless", "--ip", "127.0.0.1",
		"--port", fmt.Sprint(port), "--http-port", fmt.Sprint(httpPort), "--metrics-port", fmt.Sprint(metricsPort),
		"--namespace", "default", "--log-level", "error"}, DevServerFlags...)
	cmd := exec.Command(cli, args...)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	// The server dies with the test binary, however the binary ends.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return "", err
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		c, err := client.Dial(client.Options{HostPort: addr, Namespace: "default"})
		if err == nil {
			_, err = c.WorkflowService().DescribeNamespace(ctx, describeDefault)
			c.Close()
		}
		cancel()
		if err == nil {
			return addr, nil
		}
		time.Sleep(200 * time.Millisecond)
	}
	_ = cmd.Process.Kill()
	return "", fmt.Errorf("not ready on %s within 60s", addr)
}

// DevServerFlags are the dev server's settings of make run and make bench (scripts/lib.sh,
// VC_TEMPORAL_DEV_FLAGS, which says why each is there): runs.SearchAttributes, the
// search-attribute cache on, 1,000 visibility calls a second per namespace, WAL without an fsync per commit (a no-op in memory).
var DevServerFlags = []string{
	"--search-attribute", "TenantId=Keyword", "--search-attribute", "ObjectType=Keyword", "--search-attribute", "ObjectId=Keyword",
	"--dynamic-config-value", "system.forceSearchAttributesCacheRefreshOnRead=false", "--dynamic-config-value", "frontend.namespaceRPS.visibility=1000",
	"--sqlite-pragma", "journal_mode=wal", "--sqlite-pragma", "synchronous=normal",
}

var describeDefault = &workflowservice.DescribeNamespaceRequest{Namespace: "default"}
