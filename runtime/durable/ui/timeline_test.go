package ui

import (
	"context"
	"fmt"
	"html"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"skydurable/runtime/codec"
	"skydurable/runtime/db"
	"skydurable/runtime/db/dbtest"
	"skydurable/runtime/durable"
	"skydurable/runtime/task"
)

// xssStep is a step id that must reach the timeline's titles as text.
const xssStep = `charge <b>`

// addTimelineRun runs "tl-1" on f's database under a virtual clock that
// moves a second between polls: step "a", a sleep of 1 minute, a wait for
// the signal "go", step "b", and step xssStep, which fails on its first
// attempt and succeeds when retried. It ends done.
func addTimelineRun(t *testing.T, f *fixture, d *db.DB) {
	t.Helper()
	var mu sync.Mutex
	now := time.Now().Add(-time.Hour)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	tick := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	e := durable.New(d, durable.Options{WorkerID: "tl-worker", Clock: clock})
	failures := 0
	tl := durable.RegisterWith(durable.RetryPolicy{MaxAttempts: 3, InitialBackoff: time.Second, Jitter: -1}, "tl", codec.String, codec.String,
		func(c *durable.Ctx, in string) task.Task[string] {
			a := durable.Step(c, codec.String, "a", task.Succeed("a"))
			return task.AndThen(a, func(string) task.Task[string] {
				return task.AndThen(durable.Sleep(c, time.Minute.Milliseconds()), func(struct{}) task.Task[string] {
					return task.AndThen(durable.AwaitSignal(c, codec.String, "go"), func(string) task.Task[string] {
						b := durable.Step(c, codec.String, "b", task.Succeed("b"))
						return task.AndThen(b, func(string) task.Task[string] {
							return durable.Step(c, codec.String, xssStep, task.From(func(context.Context) (string, error) {
								if failures++; failures == 1 {
									return "", task.Errorf(task.Unavailable, "first try fails")
								}
								return "c", nil
							}))
						})
					})
				})
			})
		})
	defs := []durable.Workflow{tl.Erase()}
	if err := e.StartJSON(f.ctx, tl.Erase(), "tl-1", `"x"`); err != nil {
		t.Fatal(err)
	}
	poll := func(times int) {
		for range times {
			tick(time.Second)
			if _, err := e.Poll(f.ctx, defs); err != nil {
				t.Fatal(err)
			}
		}
	}
	poll(1) // step a, then the sleep suspends
	tick(time.Minute)
	poll(1) // wakes, waits for "go"
	if err := e.Signal(f.ctx, "tl-1", "go", `"now"`); err != nil {
		t.Fatal(err)
	}
	poll(1) // step b, then the failure
	tick(time.Second)
	poll(1) // the retry
	if got := f.status("tl-1"); got != durable.StatusDone {
		t.Fatalf("tl-1 is %s, want done", got)
	}
}

// count is how many times re matches body.
func count(body, re string) int { return len(regexp.MustCompile(re).FindAllString(body, -1)) }

// TestRunPageTimeline: the run page draws three step bars, a sleep and a
// signal wait, a mark per other history event (the wakes' claims, the
// failure, the retry's claim, done), each with its exact times in a title
// and a link to its journal or history row; user text in titles is text.
func TestRunPageTimeline(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, _ string, d *db.DB) {
		f := newFixture(t, d, Options{})
		addTimelineRun(t, f, d)
		history, err := f.e.History(f.ctx, "tl-1")
		if err != nil {
			t.Fatal(err)
		}
		kinds := map[durable.EventKind]int{}
		for _, e := range history {
			kinds[e.Kind]++
		}
		if kinds["suspended"] != 2 || kinds["failed"] != 1 || kinds["done"] != 1 {
			t.Fatalf("tl-1's history is %v, want 2 suspensions, a failure and done", kinds)
		}
		body := f.page("/runs/tl-1", `id="timeline"`)
		if n := count(body, `<rect class="step step"`); n != 3 {
			t.Errorf("%d step bars, want 3", n)
		}
		if n, sleeps, signals := count(body, `<rect class="wait `), count(body, `<rect class="wait sleep"`), count(body, `<rect class="wait signal"`); n != 2 || sleeps != 1 || signals != 1 {
			t.Errorf("%d wait spans (%d sleeps, %d signal waits), want a sleep and a signal wait", n, sleeps, signals)
		}
		if n, failed := count(body, `<rect class="mark `), count(body, `<rect class="mark failed"`); n != len(history)-2 || failed != 1 {
			t.Errorf("%d marks (%d failed), want %d (every event but the 2 suspensions), one failed", n, failed, len(history)-2)
		}
		// Each step links to its journal row, which exists on the page.
		links := regexp.MustCompile(`<a class="tl-step" href="/runs/tl-1#j-(\d+)">`).FindAllStringSubmatch(body, -1)
		if len(links) != 3 {
			t.Fatalf("step links %v, want 3 to journal rows", links)
		}
		for _, l := range links {
			if !strings.Contains(body, `<li id="j-`+l[1]+`">`) {
				t.Errorf("a step links to #j-%s, which the page lacks", l[1])
			}
		}
		// The retried step's bar starts at the retry's claim (the virtual
		// clock stands still within a poll: 0ms), not at the entry before
		// it, two ticks earlier.
		title := regexp.MustCompile(`<title>step &#34;charge &lt;b&gt;&#34; \(#\d+\): ([^,]+), `).FindStringSubmatch(body)
		if title == nil || title[1] != "0ms" {
			t.Errorf("the retried step's title %v, want 0ms from the retry's claim", title)
		}
		if strings.Contains(body, "charge <b>") {
			t.Error("a step id reached the page as markup")
		}
		if !regexp.MustCompile(`<title>waited on signal &#34;go&#34;: [^<]+ \(claimed\)</title>`).MatchString(body) {
			t.Error("the signal wait's title does not say what it waited on and what ended it")
		}
		if !strings.Contains(body, `href="#h-`) || !strings.Contains(body, `id="h-`) {
			t.Error("marks do not link to history rows")
		}
		if !regexp.MustCompile(`<text x="[0-9.]+%" y="11">&#43;(\d+s|\dm)</text>`).MatchString(body) {
			t.Errorf("the axis of a run of about a minute is not labelled in seconds or minutes:\n%s", body)
		}
	})
}

func TestAxisLabels(t *testing.T) {
	for _, c := range []struct {
		span  time.Duration
		every time.Duration
		label string
	}{
		{3 * time.Millisecond, time.Millisecond, "1ms"},
		{900 * time.Millisecond, 200 * time.Millisecond, "200ms"},
		{3 * time.Second, 500 * time.Millisecond, "1.5s"},
		{70 * time.Minute, 10 * time.Minute, "10m"},
		{5 * 24 * time.Hour, 24 * time.Hour, "1d"},
	} {
		every := tickEvery(c.span)
		label := axisLabel(c.every)
		if c.every == 500*time.Millisecond {
			label = axisLabel(3 * every)
		}
		if every != c.every || label != c.label {
			t.Errorf("a span of %s ticks every %s labelled %q, want every %s labelled %q", c.span, every, label, c.every, c.label)
		}
	}
}

// TestRunPagePaging: a run with 120 signals shows 50 on a page, with the
// counts and links to the others that keep the journal's page.
func TestRunPagePaging(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, _ string, d *db.DB) {
		f := newFixture(t, d, Options{})
		for i := range 120 {
			if err := f.e.Signal(f.ctx, "order-1", fmt.Sprintf("s-%03d", i), `"p"`); err != nil {
				t.Fatal(err)
			}
		}
		row := regexp.MustCompile(`<td>(s-\d{3})</td>`)
		names := func(body string) []string {
			var out []string
			for _, m := range row.FindAllStringSubmatch(body, -1) {
				out = append(out, m[1])
			}
			return out
		}
		first := f.page("/runs/order-1", "1–50 of 120 (page 1 of 3)")
		if got := names(first); len(got) != 50 || got[0] != "s-000" {
			t.Errorf("page 1 lists %v, want s-000 to s-049", got)
		}
		next := regexp.MustCompile(`<a class="next" href="([^"]+)">`).FindStringSubmatch(first)
		if next == nil || html.UnescapeString(next[1]) != "/runs/order-1?mailbox_page=2#mailbox-section" {
			t.Fatalf("page 1's next link %v", next)
		}
		second := f.page(strings.TrimSuffix(html.UnescapeString(next[1]), "#mailbox-section"), "51–100 of 120 (page 2 of 3)",
			`href="/runs/order-1#mailbox-section">« first`, `href="/runs/order-1?mailbox_page=3#mailbox-section">next`)
		if got := names(second); len(got) != 50 || got[0] != "s-050" || got[49] != "s-099" {
			t.Errorf("page 2 lists %v, want s-050 to s-099", got)
		}
		last := f.page("/runs/order-1?mailbox_page=3&journal_page=1", "101–120 of 120 (page 3 of 3)")
		if got := names(last); len(got) != 20 || got[19] != "s-119" {
			t.Errorf("page 3 lists %v, want s-100 to s-119", got)
		}
		if strings.Contains(last, `class="next"`) {
			t.Error("the last page has a next link")
		}
		f.page("/runs/order-1?mailbox_page=9", "page 3 of 3") // past the end: the last page
		// The whole mailbox still says what the run waits for.
		f.page("/runs/order-2?mailbox_page=1", `id="wake"`)
		for _, bad := range []string{"0", "x", "-1"} {
			if status, body := f.get("/runs/order-1?mailbox_page=" + bad); status != 400 || !strings.Contains(body, fmt.Sprintf("mailbox_page &#34;%s&#34; is not a page number", bad)) {
				t.Errorf("mailbox_page=%s answers %d:\n%s", bad, status, body)
			}
		}
		if size := len(first); size > 120_000 {
			t.Errorf("page 1 is %d bytes", size)
		}
	})
}

// TestOrphansPage: signals sent to ids no run has are listed, with name,
// size and age, paged; ids and names are text; the nav links to the page.
func TestOrphansPage(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, _ string, d *db.DB) {
		f := newFixture(t, d, Options{})
		f.page("/", `<a href="/orphans" id="nav-orphans"`)
		f.page("/orphans", "no orphan signals")
		if err := f.e.Signal(f.ctx, xss, "paid", `"12345"`); err != nil {
			t.Fatal(err)
		}
		for i := range 60 {
			if err := f.e.Signal(f.ctx, fmt.Sprintf("ghost-%02d", i), "paid", `"x"`); err != nil {
				t.Fatal(err)
			}
		}
		body := f.page("/orphans", `id="orphans"`, html.EscapeString(xss), "<td>paid</td><td>7</td>", "1–50 (page 1)",
			`<a class="next" href="/orphans?page=2">`)
		if strings.Contains(body, xss) {
			t.Error("an orphan's run id reached the page as markup")
		}
		if strings.Contains(body, "order-1") {
			t.Error("a signal to an existing run is listed as an orphan")
		}
		if n := count(body, `<td>ghost-\d\d</td>`); n != 49 {
			t.Errorf("page 1 lists %d ghosts, want 49 (after the xss one)", n)
		}
		second := f.page("/orphans?page=2", "51–61 (page 2)", `<a class="prev" href="/orphans">`)
		if n := count(second, `<td>ghost-\d\d</td>`); n != 11 || strings.Contains(second, `class="next"`) {
			t.Errorf("page 2 lists %d ghosts (want 11) or has a next link", n)
		}
		if status, body := f.get("/orphans?page=99"); status != 400 || !strings.Contains(body, "sky durable signals --orphans") {
			t.Errorf("/orphans?page=99 answers %d:\n%s", status, body)
		}
	})
}

// TestRunPageTimelineChildren: a parent's timeline draws a bar per child
// its page lists, each linking to the child's page, ids as text, and a
// wait on its children open until now.
func TestRunPageTimelineChildren(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, _ string, d *db.DB) {
		f := newFixture(t, d, Options{})
		addFamilies(t, f)
		body := f.page("/runs/fan-1", `<text class="lane" x="0" y="106">children</text>`)
		if n := count(body, `<a class="tl-child" href="/runs/fan-1%2Fk-\d\d"><title>child fan-1/k-\d\d \(leaf\) (waiting|done): `); n != 20 {
			t.Errorf("%d child bars, want 20 (the children the page lists)", n)
		}
		if !regexp.MustCompile(`<title>waiting on children of group &#34;[^&]*&#34; for [^<]+, since [^<]+</title><rect class="wait children"`).MatchString(body) {
			t.Error("the parent's open wait on its children is not drawn")
		}
		single := f.page("/runs/single-1")
		if strings.Contains(single, "<b>only</b>") || !strings.Contains(single, "child single-1/&lt;b&gt;only&lt;/b&gt; (leaf)") {
			t.Error("a child id in the timeline is not text")
		}
	})
}

// TestRunPageJournalPaging: a run of 60 steps shows entries 1 to 50, then
// 51 to 60 on page 2; the timeline draws all 60 and links each bar to its
// entry's page, keeping the mailbox's page.
func TestRunPageJournalPaging(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, _ string, d *db.DB) {
		f := newFixture(t, d, Options{})
		many := durable.Register("many", codec.Int, codec.Int, func(c *durable.Ctx, n int64) task.Task[int64] {
			steps := make([]task.Task[int64], n)
			for i := range steps {
				steps[i] = durable.Step(c, codec.Int, fmt.Sprintf("s%02d", i), task.Succeed(int64(i)))
			}
			return task.Map(task.Sequence(steps), func(xs []int64) int64 { return int64(len(xs)) })
		})
		f.defs = append(f.defs, many.Erase())
		if err := f.e.StartJSON(f.ctx, many.Erase(), "many-1", "60"); err != nil {
			t.Fatal(err)
		}
		f.drain()
		entries := func(body string) []string {
			var out []string
			for _, m := range regexp.MustCompile(`<li id="j-(\d+)">`).FindAllStringSubmatch(body, -1) {
				out = append(out, m[1])
			}
			return out
		}
		first := f.page("/runs/many-1?mailbox_page=1", "1–50 of 60 (page 1 of 2)", `<a class="next" href="/runs/many-1?journal_page=2#journal-section">`)
		if got := entries(first); len(got) != 50 || got[0] != "1" || got[49] != "50" {
			t.Errorf("journal page 1 shows entries %v", got)
		}
		if n := count(first, `<rect class="step step"`); n != 60 {
			t.Errorf("the timeline draws %d step bars, want 60", n)
		}
		if !strings.Contains(first, `<a class="tl-step" href="/runs/many-1?journal_page=2#j-55">`) || !strings.Contains(first, `<a class="tl-step" href="/runs/many-1#j-7">`) {
			t.Error("the step bars do not link to their entries' pages")
		}
		second := f.page("/runs/many-1?journal_page=2", "51–60 of 60 (page 2 of 2)", `<a class="prev" href="/runs/many-1#journal-section">`)
		if got := entries(second); len(got) != 10 || got[0] != "51" || got[9] != "60" {
			t.Errorf("journal page 2 shows entries %v", got)
		}
	})
}
