package ui

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"skydurable/runtime/db/dbtest"
)

// TestBrowserBulkRetry: in Chromium, the runs list filtered to dead runs
// offers a bulk retry; its confirmation page counts them and its button
// retries them (the browser's own Origin passes the same-origin check).
func TestBrowserBulkRetry(t *testing.T) {
	ctx := browser(t)
	f := newFixture(t, dbtest.Open(t, "sqlite"), Options{Refresh: -1})
	shot := newShots(t)
	do(t, ctx, chromedp.Navigate(f.srv.URL+"/runs?status=dead"), chromedp.WaitVisible(chromedp.CSS("#bulk-retry")))
	shot.take(ctx, "1-runs-dead")
	do(t, ctx, chromedp.Click(chromedp.CSS("#bulk-retry")), chromedp.WaitVisible(chromedp.CSS("#confirm-button")))
	if n := text(t, ctx, "#bulk-count"); n != "1" {
		t.Fatalf("the confirmation counts %q runs, want 1", n)
	}
	shot.take(ctx, "2-bulk-confirm")
	do(t, ctx, chromedp.Click(chromedp.CSS("#confirm-button")), chromedp.WaitVisible(chromedp.CSS("#notice")))
	if notice, list := text(t, ctx, "#notice"), text(t, ctx, "#runs tbody"); !strings.Contains(notice, "retry: 1 run changed") || strings.Contains(list, "broken-1") {
		t.Errorf("after the bulk retry: notice %q, dead list %q", notice, list)
	}
	shot.take(ctx, "3-bulk-done")
	if got := f.status("broken-1"); got != "waiting" {
		t.Errorf("after the bulk retry broken-1 is %s, want waiting", got)
	}
}
