package ui

import (
	"context"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"skydurable/runtime/db"
	"skydurable/runtime/db/dbtest"
)

// screenshotsEnv names the directory the browser tests keep their
// screenshots in (default: the test's temporary directory, logged).
const screenshotsEnv = "SKY_UI_SCREENSHOTS"

// browser starts headless Chromium for t and returns a context for its tab,
// bounded in time. Without Chromium the test skips, except under CI=true,
// where it fails: CI installs it (.ci/run).
func browser(t *testing.T) context.Context {
	t.Helper()
	path, err := exec.LookPath("chromium")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("chromium is not installed (CI=true, so this is a failure, not a skip); hint: apt-get install -y chromium")
		}
		t.Skip("chromium is not installed; apt-get install -y chromium")
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1280, 900),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	// The first action starts the browser, and must not run under a
	// timeout (it would stop the browser); later ones do.
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	tctx, cancelTimeout := context.WithTimeout(ctx, 90*time.Second)
	t.Cleanup(cancelTimeout)
	return tctx
}

// shots saves screenshots as test artefacts.
type shots struct {
	t   *testing.T
	dir string
}

func newShots(t *testing.T) shots {
	dir := os.Getenv(screenshotsEnv)
	if dir == "" {
		dir = t.TempDir()
	} else {
		dir = filepath.Join(dir, strings.ReplaceAll(t.Name(), "/", "_"))
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return shots{t: t, dir: dir}
}

// take saves the whole page as name.png.
func (s shots) take(ctx context.Context, name string) {
	s.t.Helper()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		s.t.Fatalf("screenshot %s: %v", name, err)
	}
	path := filepath.Join(s.dir, name+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		s.t.Fatal(err)
	}
	s.t.Logf("screenshot %s", path)
}

// do runs steps, failing the test on error.
func do(t *testing.T, ctx context.Context, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(ctx, steps...); err != nil {
		t.Fatal(err)
	}
}

// follow clicks the element link and waits for the element then of the
// page it leads to. A node the page replaced between its lookup and the
// click or the wait ("Could not find node with given id": a navigation in
// flight on a loaded machine) is looked up again: first the page it leads
// to, in case the click went through, then the click once more.
func follow(t *testing.T, ctx context.Context, link, then string) {
	t.Helper()
	err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(link)), chromedp.WaitVisible(chromedp.CSS(then)))
	for tries := 0; err != nil && strings.Contains(err.Error(), "Could not find node") && tries < 3; tries++ {
		landed, cancel := context.WithTimeout(ctx, 5*time.Second)
		err = chromedp.Do(landed, chromedp.WaitVisible(chromedp.CSS(then)))
		cancel()
		if err != nil {
			err = chromedp.Do(ctx, chromedp.Click(chromedp.CSS(link)), chromedp.WaitVisible(chromedp.CSS(then)))
		}
	}
	if err != nil {
		t.Fatalf("follow %s to %s: %v", link, then, err)
	}
}

// text reads the text of the element sel.
func text(t *testing.T, ctx context.Context, sel string) string {
	t.Helper()
	s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
	if err != nil {
		t.Fatalf("text of %s: %v", sel, err)
	}
	return s
}

// TestBrowser drives the dashboard in headless Chromium: the overview, a
// filtered list, a search from the header's box, a run, and a retry of a dead run through its confirmation.
func TestBrowser(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, _ string, d *db.DB) {
		ctx := browser(t)
		f := newFixture(t, d, Options{Refresh: -1})
		shot := newShots(t)

		do(t, ctx, chromedp.Navigate(f.srv.URL+"/"), chromedp.WaitVisible(chromedp.CSS("#counts")))
		title, err := chromedp.Run(ctx, chromedp.Title())
		if counts := text(t, ctx, "#counts"); err != nil || title != "Overview · sky durable" || !strings.Contains(counts, "checkout") || !strings.Contains(counts, "broken") {
			t.Errorf("overview: title %q (%v), counts %q", title, err, counts)
		}
		shot.take(ctx, "1-overview")

		do(t, ctx,
			chromedp.Navigate(f.srv.URL+"/runs"),
			chromedp.WaitVisible(chromedp.CSS("#filters")),
			chromedp.SetValue(chromedp.CSS(`select[name="status"]`), "dead"),
			chromedp.Click(chromedp.CSS(`#filters button[type="submit"]`)),
			chromedp.WaitNotPresent(chromedp.CSS(`#runs a[href="/runs/order-1"]`)),
			chromedp.WaitVisible(chromedp.CSS(`#runs a[href="/runs/broken-1"]`)),
		)
		location, err := chromedp.Run(ctx, chromedp.Location())
		if list := text(t, ctx, "#runs tbody"); err != nil || !strings.Contains(location, "status=dead") || !strings.Contains(list, "broken-1") || strings.Contains(list, "order-") {
			t.Errorf("filtered list at %s (%v) shows %q, want only broken-1", location, err, list)
		}
		shot.take(ctx, "2-runs-dead")

		// The search box in the header: a dead run by its error's text.
		do(t, ctx,
			chromedp.Navigate(f.srv.URL+"/"),
			chromedp.WaitVisible(chromedp.CSS("#nav-search")),
			chromedp.SendKeys(chromedp.CSS("#nav-search"), "PROVIDER down\r"),
			chromedp.WaitVisible(chromedp.CSS(`#runs a[href="/runs/broken-1"]`)),
		)
		location, err = chromedp.Run(ctx, chromedp.Location())
		if list := text(t, ctx, "#runs tbody"); err != nil || !strings.Contains(location, "search=PROVIDER+down") || strings.Contains(list, "order-") {
			t.Errorf("search at %s (%v) shows %q, want only broken-1", location, err, list)
		}
		if v, err := chromedp.Run(ctx, chromedp.Value(chromedp.CSS("#search"))); err != nil || v != "PROVIDER down" {
			t.Errorf("the list's search field holds %q (%v), want the text searched", v, err)
		}
		shot.take(ctx, "2b-runs-search")

		follow(t, ctx, `#runs a[href="/runs/broken-1"]`, "#run-status")
		if status := text(t, ctx, "#run-status"); status != "dead" {
			t.Fatalf("run page status = %q, want dead", status)
		}
		shot.take(ctx, "3-run-dead")

		do(t, ctx, chromedp.Click(chromedp.CSS("#action-retry")), chromedp.WaitVisible(chromedp.CSS("#confirm-button")))
		shot.take(ctx, "4-retry-confirm")
		do(t, ctx, chromedp.Click(chromedp.CSS("#confirm-button")), chromedp.WaitVisible(chromedp.CSS("#notice")))
		if status, notice := text(t, ctx, "#run-status"), text(t, ctx, "#notice"); status != "waiting" || !strings.Contains(notice, "is due again") {
			t.Errorf("after retry the page says %q, %q; want waiting, due again", status, notice)
		}
		shot.take(ctx, "5-run-retried")
		if got := f.status("broken-1"); got != "waiting" {
			t.Errorf("after retry the run is %s", got)
		}
	})
}

// TestBrowserLiveRefresh: the overview updates in place when a run starts,
// without a reload.
func TestBrowserLiveRefresh(t *testing.T) {
	ctx := browser(t)
	f := newFixture(t, dbtest.Open(t, "sqlite"), Options{})
	live, err := New(f.e, Options{Refresh: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(live)
	defer srv.Close()
	do(t, ctx, chromedp.Navigate(srv.URL+"/"), chromedp.WaitVisible(chromedp.CSS("#started-total")))
	if started := text(t, ctx, "#started-total"); started != "3" {
		t.Fatalf("started = %q, want 3", started)
	}
	// Mark the document: a reload would lose the mark.
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`window.sameDocument = true`)); err != nil {
		t.Fatal(err)
	}
	if err := f.e.StartJSON(f.ctx, f.defs[0], "order-3", `"three"`); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`document.getElementById("started-total").textContent === "4"`,
		chromedp.WithPollingInterval(50*time.Millisecond))); err != nil {
		t.Fatalf("the overview did not show the new run: %v", err)
	}
	same, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`window.sameDocument === true`))
	if err != nil || !same {
		t.Errorf("the page reloaded instead of refreshing in place (%v)", err)
	}
	newShots(t).take(ctx, "overview-refreshed")
}

// TestBrowserChildLinks opens a parent run, follows a child link to the
// child's page and its parent link back, and the "all children" link to the
// list filtered by parent.
func TestBrowserChildLinks(t *testing.T) {
	ctx := browser(t)
	f := newFixture(t, dbtest.Open(t, "sqlite"), Options{Refresh: -1})
	addFamilies(t, f)
	shot := newShots(t)

	do(t, ctx, chromedp.Navigate(f.srv.URL+"/runs/fan-1"), chromedp.WaitVisible(chromedp.CSS("#children")))
	if rows := text(t, ctx, "#children tbody"); !strings.Contains(rows, "fan-1/k-56") || !strings.Contains(rows, "done") || !strings.Contains(rows, "leaf") {
		t.Errorf("fan-1's children read %q, want fan-1/k-56 done (leaf) among them", rows)
	}
	shot.take(ctx, "1-parent")

	follow(t, ctx, `#children a[href="/runs/fan-1%2Fk-55"]`, "#parent")
	if id, status := text(t, ctx, "#run-id"), text(t, ctx, "#run-status"); id != "fan-1/k-55" || status != "waiting" {
		t.Errorf("the child link opened %q (%s), want fan-1/k-55 waiting", id, status)
	}
	shot.take(ctx, "2-child")

	follow(t, ctx, "#parent", "#children-more")
	if id := text(t, ctx, "#run-id"); id != "fan-1" {
		t.Errorf("the parent link opened %q, want fan-1", id)
	}
	follow(t, ctx, "#children-more", "#parent-filter")
	location, err := chromedp.Run(ctx, chromedp.Location())
	if list := text(t, ctx, "#runs tbody"); err != nil || !strings.Contains(location, "parent=fan-1") || !strings.Contains(list, "fan-1/k-07") || strings.Contains(list, "order-") || strings.Contains(list, "single-1") {
		t.Errorf("all children at %s (%v) list %q, want fan-1's children only", location, err, list)
	}
	shot.take(ctx, "3-all-children")
}

// TestBrowserHeldRuns: in the browser, the overview says how many due runs
// limits hold and the held run's page says which limit holds it.
func TestBrowserHeldRuns(t *testing.T) {
	ctx := browser(t)
	f := newFixture(t, dbtest.Open(t, "sqlite"), Options{Refresh: -1})
	release := holdRuns(t, f)
	defer release()
	shot := newShots(t)

	do(t, ctx, chromedp.Navigate(f.srv.URL+"/"), chromedp.WaitVisible(chromedp.CSS("#held")))
	if held, oldest := text(t, ctx, "#held"), text(t, ctx, "#oldest-due"); !strings.HasPrefix(held, "2 due runs are held") || oldest != "none due" {
		t.Errorf("overview: held %q, oldest due %q; want 2 held and none due", held, oldest)
	}
	shot.take(ctx, "1-overview-held")

	do(t, ctx, chromedp.Navigate(f.srv.URL+"/runs/k-2"), chromedp.WaitVisible(chromedp.CSS("#wake")))
	if wake := text(t, ctx, "#wake"); wake != "held by concurrency (key a)" {
		t.Errorf("k-2's wake reads %q, want held by concurrency (key a)", wake)
	}
	shot.take(ctx, "2-run-held")
}
