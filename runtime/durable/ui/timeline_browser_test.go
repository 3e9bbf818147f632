package ui

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image/png"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"skydurable/runtime/db/dbtest"
)

// drawn is what the browser laid out of the timeline: the size of each
// element's box by kind, and the title of the first step bar.
type drawn struct {
	Boxes     map[string][][2]float64
	StepTitle string
}

const drawnJS = `JSON.stringify({
  Boxes: Object.fromEntries(["step", "wait", "mark", "axis text"].map(k => [k,
    Array.from(document.querySelectorAll("#timeline " + (k === "axis text" ? ".axis text" : "rect." + k)))
      .map(e => { const b = e.getBoundingClientRect(); return [b.width, b.height]; })])),
  StepTitle: document.querySelector("#timeline a.tl-step title").textContent,
})`

// TestBrowserTimeline: in Chromium the run page of a run that ran three
// steps, slept, waited for a signal and was retried once draws its step
// bars, waits, marks and axis labels with non-empty boxes; the screenshot
// is a PNG of the page's size; clicking a step bar goes to its journal row.
func TestBrowserTimeline(t *testing.T) {
	ctx := browser(t)
	d := dbtest.Open(t, "sqlite")
	f := newFixture(t, d, Options{Refresh: -1})
	addTimelineRun(t, f, d)
	shot := newShots(t)

	do(t, ctx, chromedp.Navigate(f.srv.URL+"/runs/tl-1"), chromedp.WaitVisible(chromedp.CSS("#timeline rect.step")))
	js, err := chromedp.Run(ctx, chromedp.Evaluate[string](drawnJS))
	if err != nil {
		t.Fatal(err)
	}
	var got drawn
	if err := json.Unmarshal([]byte(js), &got); err != nil {
		t.Fatalf("%v: %s", err, js)
	}
	for kind, want := range map[string]int{"step": 3, "wait": 2, "mark": 5} {
		if len(got.Boxes[kind]) != want {
			t.Errorf("%d %s elements drawn, want %d", len(got.Boxes[kind]), kind, want)
		}
	}
	if len(got.Boxes["axis text"]) < 2 {
		t.Errorf("the axis has %d labels", len(got.Boxes["axis text"]))
	}
	for kind, boxes := range got.Boxes {
		for i, b := range boxes {
			if b[0] <= 0 || b[1] <= 0 {
				t.Errorf("%s %d is drawn %gx%g, not visible", kind, i, b[0], b[1])
			}
		}
	}
	if !strings.HasPrefix(got.StepTitle, `step "a" (#1): `) || !strings.Contains(got.StepTitle, " → ") {
		t.Errorf("the first step bar's title is %q", got.StepTitle)
	}
	shot.take(ctx, "timeline")
	b, err := os.ReadFile(filepath.Join(shot.dir, "timeline.png"))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := png.DecodeConfig(bytes.NewReader(b))
	if err != nil || cfg.Width != 1280 || cfg.Height < 600 || len(b) < 20_000 {
		t.Errorf("the screenshot is %d bytes, %dx%d (%v); want a PNG 1280 wide showing the page", len(b), cfg.Width, cfg.Height, err)
	}

	do(t, ctx, chromedp.Click(chromedp.CSS(`#timeline a.tl-step[href$="#j-5"] rect`)), chromedp.WaitVisible(chromedp.CSS("#j-5")))
	if loc, err := chromedp.Run(ctx, chromedp.Location()); err != nil || !strings.HasSuffix(loc, "/runs/tl-1#j-5") {
		t.Errorf("clicking the last step bar went to %s (%v), want its journal row #j-5", loc, err)
	}
}

// TestBrowserPagedRefresh: live refresh of the second page of a mailbox
// keeps the page and the scroll position.
func TestBrowserPagedRefresh(t *testing.T) {
	ctx := browser(t)
	d := dbtest.Open(t, "sqlite")
	f := newFixture(t, d, Options{})
	for i := range 120 {
		if err := f.e.Signal(f.ctx, "order-1", fmt.Sprintf("s-%03d", i), `"p"`); err != nil {
			t.Fatal(err)
		}
	}
	live, err := New(f.e, Options{Refresh: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(live)
	defer srv.Close()
	do(t, ctx, chromedp.Navigate(srv.URL+"/runs/order-1?mailbox_page=2#mailbox-section"), chromedp.WaitVisible(chromedp.CSS("#signals")))
	before, err := chromedp.Run(ctx, chromedp.Evaluate[float64](`window.sameDocument = true; window.scrollY`))
	if err != nil || before <= 0 {
		t.Fatalf("the page did not scroll to the mailbox: scrollY %v (%v)", before, err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`document.getElementById("live").dataset.refreshed !== undefined`,
		chromedp.WithPollingInterval(50*time.Millisecond))); err != nil {
		t.Fatalf("the page did not refresh: %v", err)
	}
	after, err := chromedp.Run(ctx, chromedp.Evaluate[string](`JSON.stringify([window.sameDocument === true, window.scrollY, location.search,
		document.querySelector("#signals tbody td:nth-child(2)").textContent])`))
	if want := fmt.Sprintf(`[true,%v,"?mailbox_page=2","s-050"]`, before); err != nil || after != want {
		t.Errorf("after a refresh: %s (%v), want %s (same document, scroll, page)", after, err, want)
	}
}
