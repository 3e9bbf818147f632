package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/spf13/pflag"

	"skydurable/runtime/durable"
	"skydurable/runtime/durable/ui"
	"skydurable/runtime/durable/view"
	"skydurable/runtime/task"
)

// `sky durable ui` serves the dashboard (runtime/durable/ui) and `sky
// durable stats` prints its overview figures.

func init() {
	registerDurable(durableCommand{
		use:   "ui [--addr 127.0.0.1:8080] [--token T] [--read-only] [--all-namespaces]",
		short: "serve the dashboard (docs/ui.md) until Ctrl-C",
		long: `Serve the web dashboard of the runs (docs/ui.md) until Ctrl-C. Anything but a loopback address
needs a token, best passed in ` + uiTokenEnv + ` (ps shows --token to every user of the
machine); --read-only shows the runs and refuses every action (signal, cancel, retry, release, fork, bulk). The dashboard shows
one namespace (--namespace) and its token grants that one only; --all-namespaces adds a selector
of every namespace, and its token grants them all.`,
		example: `  sky durable ui
  sky durable ui --namespace billing
  SKY_DURABLE_UI_TOKEN=s3cret sky durable ui --addr 0.0.0.0:8080 --read-only --all-namespaces`,
		flags: func(fs *pflag.FlagSet, f *durableFlags) {
			fs.StringVar(&f.addr, "addr", "127.0.0.1:8080", "address to serve on; anything but loopback needs --token")
			fs.StringVar(&f.token, "token", "", "token every request must carry (default $"+uiTokenEnv+", which ps does not show)")
			fs.BoolVar(&f.readOnly, "read-only", false, "show runs, refuse every action (signal, cancel, retry, release, fork, bulk)")
			fs.BoolVar(&f.allNamespaces, "all-namespaces", false, "show every namespace, with a selector (the token grants them all)")
		},
		check: func(f *durableFlags, _ []string) error {
			if f.token == "" {
				f.token = os.Getenv(uiTokenEnv)
			} else {
				fmt.Fprintf(f.warn, "note: --token is visible to every user of this machine (ps, /proc); prefer passing it in %s\n", uiTokenEnv)
			}
			return checkUIAddr(f.addr, f.token)
		},
		invalidIsUsage: true,
		run:            durableUI,
	})
	registerDurable(durableCommand{
		use: "stats [--json]", readOnly: true,
		short:   "the dashboard's overview figures: runs started and finished, the oldest due, the stuck",
		example: `  sky durable stats\n  sky durable stats --json`,
		flags:   durableJSONFlag,
		run:     durableStats,
	})
}

// uiTokenEnv names the dashboard's token when --token is not given.
const uiTokenEnv = "SKY_DURABLE_UI_TOKEN"

// checkUIAddr refuses to serve beyond this machine without a token.
func checkUIAddr(addr, token string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return task.Errorf(task.InvalidInput, "--addr %q is not host:port; hint: --addr 127.0.0.1:8080", addr)
	}
	if _, err := net.LookupPort("tcp", port); err != nil {
		return task.Errorf(task.InvalidInput, "--addr %q: the port %q is not a port number (0 to 65535); hint: --addr 127.0.0.1:8080", addr, port)
	}
	if token != "" {
		return nil
	}
	if ip := net.ParseIP(host); host == "localhost" || (ip != nil && ip.IsLoopback()) {
		return nil
	}
	return task.Errorf(task.InvalidInput,
		"--addr %s is reachable from other machines, so the dashboard needs a token; hint: pass --token or set %s (or keep the default 127.0.0.1)", addr, uiTokenEnv)
}

func durableUI(ctx context.Context, e *durable.Engine, f *durableFlags, _ []string, out io.Writer) error {
	token := f.token // its check checked it against the address
	opts := ui.Options{Token: token, ReadOnly: f.readOnly}
	if f.allNamespaces {
		opts.Namespaces = namespaceEngines(e)
	}
	srv, err := ui.New(e, opts)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", f.addr)
	if err != nil {
		return err
	}
	mode := ""
	if f.readOnly {
		mode = " (read-only)"
	}
	if token != "" {
		mode += " (token required: open it once with ?token=<token>)"
	}
	if f.allNamespaces {
		mode += " (every namespace)"
	} else {
		mode += " (namespace " + e.Namespace() + ")"
	}
	fmt.Fprintf(out, "sky durable ui: serving http://%s/%s; Ctrl-C stops it\n", ln.Addr(), mode)
	hs := uiServer(srv)
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = hs.Shutdown(sctx)
	}()
	if err := hs.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// namespaceEngines opens the engine of a namespace for the dashboard of
// every namespace, on e's database and keys (one per request: an engine
// holds no connection of its own).
func namespaceEngines(e *durable.Engine) func(string) (*durable.Engine, error) {
	return func(name string) (*durable.Engine, error) {
		if err := durable.CheckNamespace(name); err != nil {
			return nil, err
		}
		return durable.New(e.DB(), durable.Options{WorkerID: "sky-durable-cli", Keys: os.Getenv(durable.KeysEnv), Namespace: name}), nil
	}
}

// uiServer is the dashboard's HTTP server. A client gets 10s to send its
// headers and 30s its whole request (a form is small), so a slow or idle
// connection cannot hold the server; a page has 45s to be written, more
// than the 30s statement timeout of its queries, so a slow query's error
// still reaches the browser; an idle keep-alive connection is closed after
// 2 minutes.
func uiServer(h http.Handler) *http.Server {
	return &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second,
		WriteTimeout: durableStatementTimeout + 15*time.Second, IdleTimeout: 2 * time.Minute}
}

func durableStats(ctx context.Context, e *durable.Engine, f *durableFlags, _ []string, out io.Writer) error {
	st, err := e.Stats(ctx)
	if err != nil {
		return err
	}
	if f.json {
		return writeJSON(out, statsJSON(st))
	}
	sum := func(xs []int) (n int) {
		for _, x := range xs {
			n += x
		}
		return n
	}
	fmt.Fprintf(out, "last %d minutes: %d started, %d finished\n", len(st.Started), sum(st.Started), sum(st.Finished))
	if st.OldestDue != nil {
		fmt.Fprintf(out, "oldest due: %s (%s), due %s ago\n", view.Safe(st.OldestDue.ID), view.Safe(st.OldestDue.Workflow), view.Short(st.Now.Sub(st.OldestDue.WakeAt)))
	} else {
		fmt.Fprintln(out, "oldest due: none")
	}
	fmt.Fprintf(out, "held: %s\n", view.HeldCount(st.Held))
	fmt.Fprintf(out, "stuck past their lease: %d\n", st.StuckCount)
	for _, r := range st.Stuck {
		fmt.Fprintf(out, "  %s (%s) held by %s, lease ended %s ago\n", view.Safe(r.ID), view.Safe(r.Workflow), view.Safe(r.ClaimedBy), view.Short(st.Now.Sub(r.WakeAt)))
	}
	fmt.Fprintln(out, "runs by workflow and status:")
	for _, c := range st.Counts {
		fmt.Fprintf(out, "  %-20s %-10s %d\n", view.Safe(c.Workflow), c.Status, c.N)
	}
	return nil
}

// statsJSON is the stable JSON shape of `sky durable stats --json`.
func statsJSON(st durable.Stats) map[string]any {
	due := func(r durable.DueRun) map[string]any {
		return map[string]any{"id": r.ID, "workflow": r.Workflow, "due_at": r.WakeAt, "age_ms": st.Now.Sub(r.WakeAt).Milliseconds(), "claimed_by": r.ClaimedBy}
	}
	counts := []map[string]any{}
	for _, c := range st.Counts {
		counts = append(counts, map[string]any{"workflow": c.Workflow, "status": c.Status, "runs": c.N})
	}
	stuck := []map[string]any{}
	for _, r := range st.Stuck {
		stuck = append(stuck, due(r))
	}
	var oldest any
	if st.OldestDue != nil {
		oldest = due(*st.OldestDue)
	}
	return map[string]any{"now": st.Now, "counts": counts, "started_per_minute": st.Started, "finished_per_minute": st.Finished,
		"oldest_due": oldest, "held": st.Held, "stuck": stuck, "stuck_count": st.StuckCount}
}
