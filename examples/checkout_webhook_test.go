package examples

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestCheckoutWebhook runs examples/checkout in its service mode (`sky run
// -- serve`) with the real sky binary, and delivers the payment webhook
// over real HTTP: bad JSON is 400, an unknown order 404, the webhook
// finishes the run with one charge, a redelivery changes nothing, and
// SIGTERM stops the server gracefully (exit 0).
func TestCheckoutWebhook(t *testing.T) {
	sky := buildSky(t)
	dir := filepath.Join(t.TempDir(), "checkout")
	if err := os.CopyFS(dir, os.DirFS("checkout")); err != nil {
		t.Fatal(err)
	}
	os.RemoveAll(filepath.Join(dir, ".skydata"))
	srv := startServer(t, sky, dir, "serve")
	base := srv.base
	type order struct {
		OrderID, Status, Order string
		Charges                int
	}
	send := func(method, path, body string) (int, string) {
		t.Helper()
		return mustRequest(t, method, base+path, body)
	}
	decode := func(text string) order {
		t.Helper()
		var o order
		if err := json.Unmarshal([]byte(text), &o); err != nil {
			t.Fatalf("not an order: %q: %v", text, err)
		}
		return o
	}

	if code, body := send("GET", "/orders/order-1001", ""); code != 200 || decode(body).Status != "waiting" || decode(body).Charges != 1 {
		t.Fatalf("GET /orders/order-1001 before the webhook = %d %s; want 200, waiting, 1 charge", code, body)
	}
	if code, body := send("POST", "/webhooks/payment", `{"orderId":"order-1001"}`); code != 400 || !strings.Contains(body, `missing field \"reference\"`) {
		t.Errorf("a webhook without a reference = %d %s; want 400 naming the missing field", code, body)
	}
	if code, body := send("POST", "/webhooks/payment", `{"orderId":"order-9","reference":"stl-1"}`); code != 404 || !strings.Contains(body, "order-9") {
		t.Errorf("a webhook for an unknown order = %d %s; want 404 naming it", code, body)
	}
	for i, what := range []string{"the webhook", "its redelivery"} {
		code, body := send("POST", "/webhooks/payment", `{"orderId":"order-1001","reference":"stl-77"}`)
		if o := decode(body); code != 200 || o.Status != "done" || o.Order != "ORD-order-1001" || o.Charges != 1 {
			t.Fatalf("%s (%d) = %d %s; want 200, done, ORD-order-1001, 1 charge", what, i, code, body)
		}
	}

	if err := srv.stop(); err != nil {
		t.Error(err)
	}
	out := srv.stdout.String()
	for _, line := range []string{
		"run order-1001 is waiting for payment.settled; reserve and charge are in the journal\n",
		"webhook: payment.settled arrives for order-1001 (stl-77)\n",
		"  step finalise: order ORD-order-1001 confirmed (settlement stl-77)\n",
		"webhook: payment.settled for order-1001 again; the run is done, nothing to do\n",
	} {
		if !strings.Contains(out, line) {
			t.Errorf("stdout lacks %q:\n%s", line, out)
		}
	}
}

// server is a `sky run` serving HTTP in the background.
type server struct {
	base   string // http://127.0.0.1:PORT
	cmd    *exec.Cmd
	stdout *strings.Builder
	log    strings.Builder // stderr up to the "listening on" line
	rest   chan string     // the rest of stderr, once it closes
}

// startServer runs `sky run -- ARGS` in dir with PORT=0 and waits for its
// "listening on" line, which names the port.
func startServer(t *testing.T, sky, dir string, args ...string) *server {
	t.Helper()
	cmd := exec.Command(sky, append([]string{"run", "--"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "DATABASE_URL=", "SKY_DB_DRIVER=", "SKY_DB_PATH=", "PORT=0")
	s := &server{cmd: cmd, stdout: &strings.Builder{}, rest: make(chan string, 1)}
	cmd.Stdout = s.stdout
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	lines := bufio.NewScanner(stderr)
	listening := regexp.MustCompile(`listening on (http://127\.0\.0\.1:\d+)$`)
	for s.base == "" && lines.Scan() {
		s.log.WriteString(lines.Text() + "\n")
		if m := listening.FindStringSubmatch(lines.Text()); m != nil {
			s.base = m[1]
		}
	}
	if s.base == "" {
		cmd.Wait()
		t.Fatalf("the server never said it was listening; stderr:\n%s\nstdout:\n%s", s.log.String(), s.stdout.String())
	}
	go func() {
		data, _ := io.ReadAll(stderr)
		s.rest <- string(data)
	}()
	return s
}

// stop sends SIGTERM and waits for a graceful exit: status 0 and the
// server's stop line.
func (s *server) stop() error {
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		return err
	}
	var tail string
	select {
	case tail = <-s.rest:
	case <-time.After(60 * time.Second):
		return fmt.Errorf("the server did not stop within 60 s of SIGTERM")
	}
	if err := s.cmd.Wait(); err != nil {
		return fmt.Errorf("after SIGTERM: %v (want exit 0); stderr:\n%s%s", err, s.log.String(), tail)
	}
	if !strings.Contains(tail, "Std.Http.Server: stopped") {
		return fmt.Errorf("stderr lacks the stop line:\n%s", tail)
	}
	return nil
}

// request sends one request and returns the status and body (safe to call
// from any goroutine).
func request(method, url, body string) (int, string, error) {
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		return 0, "", err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(data), err
}

// mustRequest is request in the test's goroutine: an error fails the test.
func mustRequest(t *testing.T, method, url, body string) (int, string) {
	t.Helper()
	code, text, err := request(method, url, body)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	return code, text
}
