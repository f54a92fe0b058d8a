package testenv

import (
	"fmt"
	"net"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// RedisServer is a redis-server started for one test (no persistence) and
// killed when the test ends.
type RedisServer struct {
	Addr string
	cmd  *exec.Cmd
}

// URL is the server's redis:// URL.
func (r *RedisServer) URL() string { return "redis://" + r.Addr + "/0" }

// Kill stops the server now (to test an outage). Idempotent.
func (r *RedisServer) Kill() {
	if r.cmd.ProcessState != nil {
		return
	}
	_ = r.cmd.Process.Kill()
	_ = r.cmd.Wait()
}

// Redis returns the host:port of a fresh redis-server for this test.
func Redis(t testing.TB) string {
	t.Helper()
	return StartRedis(t).Addr
}

// StartRedis starts a redis-server on a free port for this test. Without the
// redis-server binary the test fails (like Temporal's, it is never skipped).
func StartRedis(t testing.TB) *RedisServer {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		// Never skipped: the shared limits are only tested against a real Redis.
		t.Fatalf("redis-server is not installed (apt-get install redis-server; .ci/run installs it): %v", err)
	}
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--port", fmt.Sprint(port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--dir", t.TempDir(), "--loglevel", "warning", "--logfile", "")
	// Its startup warnings (memory overcommit) are noise here; a failure to
	// start shows as "not ready" below.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start redis-server: %v", err)
	}
	r := &RedisServer{Addr: fmt.Sprintf("127.0.0.1:%d", port), cmd: cmd}
	t.Cleanup(r.Kill)
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if c, err := net.DialTimeout("tcp", r.Addr, 200*time.Millisecond); err == nil {
			c.Close()
			return r
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("redis-server not ready on %s within 10s", r.Addr)
	return nil
}
