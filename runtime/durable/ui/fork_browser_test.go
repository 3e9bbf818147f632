package ui

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"skydurable/runtime/db/dbtest"
)

// TestBrowserForkAndDiff: in Chromium, "fork from here" on a journal entry
// of a done run, confirmed, lands on the fork's page; once a worker ran it,
// its "diff with the run it was forked from" link shows the two identical.
// A second fork sets the step's result, and the run page's "diff with run"
// form shows the changed step.
func TestBrowserForkAndDiff(t *testing.T) {
	ctx := browser(t)
	f := newFixture(t, dbtest.Open(t, "sqlite"), Options{Refresh: -1})
	shot := newShots(t)
	forkFinish := chromedp.CSS(`#journal a.fork[href="/runs/order-2/fork?step=finish"]`)

	do(t, ctx, chromedp.Navigate(f.srv.URL+"/runs/order-2"), chromedp.WaitVisible(forkFinish))
	shot.take(ctx, "1-run")
	do(t, ctx, chromedp.Click(forkFinish), chromedp.WaitVisible(chromedp.CSS("#confirm-button")))
	if cut := text(t, ctx, "#cut"); !strings.Contains(cut, "entry 3 of 3") || !strings.Contains(cut, "finish") {
		t.Errorf("the fork page's cut reads %q, want entry 3 of 3, finish", cut)
	}
	shot.take(ctx, "2-fork-confirm")
	do(t, ctx, chromedp.Click(chromedp.CSS("#confirm-button")), chromedp.WaitVisible(chromedp.CSS("#forked")))
	id, notice, forked := text(t, ctx, "#run-id"), text(t, ctx, "#notice"), text(t, ctx, "#forked")
	if !strings.HasPrefix(id, "order-2~fork-") || !strings.Contains(notice, "forked from order-2 at finish") || !strings.Contains(forked, "from order-2 at step finish") {
		t.Fatalf("after the fork the page shows run %q, notice %q, forked %q", id, notice, forked)
	}
	if status := text(t, ctx, "#run-status"); status != "waiting" {
		t.Errorf("the fork is %q, want waiting (due now)", status)
	}
	shot.take(ctx, "3-forked")

	f.drain() // a worker runs the fork's rest
	do(t, ctx, chromedp.Click(chromedp.CSS("#diff-forked")), chromedp.WaitVisible(chromedp.CSS("#summary")))
	if summary := text(t, ctx, "#summary"); !strings.HasPrefix(summary, "identical") {
		t.Errorf("the fork's diff with its original says %q, want identical", summary)
	}
	shot.take(ctx, "4-diff-identical")

	do(t, ctx, chromedp.Navigate(f.srv.URL+"/runs/order-2"), chromedp.WaitVisible(forkFinish), chromedp.Click(forkFinish),
		chromedp.WaitVisible(chromedp.CSS("#confirm-button")),
		chromedp.SendKeys(chromedp.CSS("#fork-as"), "order-2-x"),
		chromedp.SendKeys(chromedp.CSS("#fork-set"), `"x"`),
		chromedp.Click(chromedp.CSS("#confirm-button")), chromedp.WaitVisible(chromedp.CSS("#forked")))
	if id := text(t, ctx, "#run-id"); id != "order-2-x" {
		t.Fatalf("the second fork landed on %q, want order-2-x", id)
	}
	do(t, ctx, chromedp.Navigate(f.srv.URL+"/runs/order-2"), chromedp.WaitVisible(chromedp.CSS("#diff-with")),
		chromedp.SendKeys(chromedp.CSS(`#diff-with input[name="b"]`), "order-2-x"),
		chromedp.Click(chromedp.CSS(`#diff-with button[type="submit"]`)), chromedp.WaitVisible(chromedp.CSS("#summary")))
	if summary, changed := text(t, ctx, "#summary"), text(t, ctx, "#diff tr.changed"); !strings.HasPrefix(summary, "2 same, 1 changed") ||
		!strings.Contains(changed, "finish") || !strings.Contains(changed, `"x"`) || !strings.Contains(changed, "r:two/") {
		t.Errorf("order-2 diffed with order-2-x says %q, changed row %q; want finish changed to \"x\"", summary, changed)
	}
	shot.take(ctx, "5-diff-changed")
}
