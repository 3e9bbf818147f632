package ui

import (
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"skydurable/runtime/db"
	"skydurable/runtime/db/dbtest"
	"skydurable/runtime/durable"
)

// TestForkAction forks the done run order-2 from the dashboard: each
// journal entry links to the fork page, the POST makes a run whose journal
// before the cut is the original's byte for byte, recorded as the
// dashboard's client, and refusals keep the form with the engine's words.
func TestForkAction(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, _ string, d *db.DB) {
		f := newFixture(t, d, Options{})
		f.page("/runs/order-2", `href="/runs/order-2/fork?step=reserve">fork from here`, `href="/runs/order-2/fork?step=signal%3ago">fork from here`,
			`href="/runs/order-2/fork?step=finish">fork from here`, `id="diff-with"`)
		f.page("/runs/order-2/fork?step=finish", `id="confirm"`, "entry 3 of 3", `<option value="finish" selected>3. finish (step)</option>`,
			"the 2 journal entries before <b>finish</b>", html.EscapeString(xss))
		if status, body := f.get("/runs/order-2/fork?step=nope"); status != http.StatusBadRequest || !strings.Contains(body, html.EscapeString(`run "order-2" has no step "nope"`)) {
			t.Errorf("fork page of an unknown step = %d, want 400 naming it:\n%s", status, body)
		}
		if status, _ := f.get("/runs/nope/fork?step=finish"); status != http.StatusNotFound {
			t.Errorf("fork page of an unknown run = %d, want 404", status)
		}
		token := f.csrf("/runs/order-2/fork?step=finish")

		// Without the CSRF token, or with another, nothing happens.
		for _, form := range []url.Values{{"step": {"finish"}, "as": {"order-2-again"}}, {"csrf": {"forged"}, "step": {"finish"}, "as": {"order-2-again"}}} {
			if status, _ := f.post("/runs/order-2/fork", form); status != http.StatusForbidden {
				t.Errorf("POST fork with csrf %q = %d, want 403", form.Get("csrf"), status)
			}
		}
		if _, _, err := f.e.Describe(f.ctx, "order-2-again"); err == nil {
			t.Fatal("a refused fork made a run")
		}

		status, loc := f.post("/runs/order-2/fork", url.Values{"csrf": {token}, "step": {"finish"}, "as": {"order-2-again"}})
		if want := "/runs/order-2-again?done=run+order-2-again+forked+from+order-2+at+finish%3B+it+is+due+now"; status != http.StatusSeeOther || loc != want {
			t.Fatalf("POST fork = %d %q, want 303 to %s", status, loc, want)
		}
		orig, oj, err := f.e.Describe(f.ctx, "order-2")
		if err != nil {
			t.Fatal(err)
		}
		fork, fj, err := f.e.Describe(f.ctx, "order-2-again")
		if err != nil {
			t.Fatal(err)
		}
		if fork.ForkedFrom != "order-2" || fork.ForkStep != "finish" || fork.Input != orig.Input || fork.Status != durable.StatusWaiting {
			t.Errorf("the fork is %+v", fork)
		}
		if len(fj) != 2 || len(oj) != 3 {
			t.Fatalf("the fork's journal has %d entries (the original's %d), want the 2 before finish", len(fj), len(oj))
		}
		for i := range fj {
			if a, b := oj[i], fj[i]; a.StepID != b.StepID || a.Kind != b.Kind || a.Result != b.Result || !a.CreatedAt.Equal(b.CreatedAt) {
				t.Errorf("entry %d: fork %+v, original %+v", i, b, a)
			}
		}
		body := f.page("/runs/order-2-again?done=x", `id="forked">from <a href="/runs/order-2">order-2</a> at step <b>finish</b>`,
			`<a id="diff-forked" href="/diff?a=order-2&amp;b=order-2-again">`)
		if !regexp.MustCompile(`forked by dashboard 127\.0\.0\.1:\d+ from order-2 at step &#34;finish&#34;`).MatchString(body) {
			t.Errorf("the fork's history does not name the dashboard's client:\n%s", body)
		}

		// Refusals keep the form: its step, new id and result.
		for _, c := range []struct {
			form   url.Values
			status int
			want   []string
		}{
			{url.Values{"step": {"finish"}, "as": {"order-2-again"}}, http.StatusConflict,
				[]string{`cannot fork run "order-2" as "order-2-again": a run with that id exists`, `value="order-2-again"`, `<option value="finish" selected>`}},
			{url.Values{"step": {"nope"}, "as": {"order-2-b"}}, http.StatusBadRequest,
				[]string{`run "order-2" has no step "nope"; hint: its steps are reserve, signal:go, finish`, `value="order-2-b"`}},
			{url.Values{"step": {"reserve"}, "set": {"not json"}}, http.StatusBadRequest,
				[]string{`result of step "reserve" is not valid JSON`, `>not json</textarea>`, `<option value="reserve" selected>`}},
			{url.Values{"step": {"signal:go"}, "set": {`"x"`}}, http.StatusBadRequest,
				[]string{`cannot set the result of "signal:go" in run "order-2": it is a signal entry`, "this entry is a signal, not a step's result"}},
		} {
			c.form.Set("csrf", token)
			status, body := f.post("/runs/order-2/fork", c.form)
			if status != c.status {
				t.Errorf("POST fork %v = %d, want %d:\n%s", c.form, status, c.status, body)
			}
			for _, w := range c.want {
				if !strings.Contains(body, html.EscapeString(w)) && !strings.Contains(body, w) {
					t.Errorf("POST fork %v lacks %q:\n%s", c.form, w, body)
				}
			}
		}

		// A fork with a result set for the step at the cut.
		long := `"` + strings.Repeat("declined ", 20) + `"`
		for as, set := range map[string]string{"order-2-x": `"x"`, "order-2-long": long} {
			if status, loc := f.post("/runs/order-2/fork", url.Values{"csrf": {token}, "step": {"finish"}, "as": {as}, "set": {set}}); status != http.StatusSeeOther || !strings.Contains(loc, "with+the+result+of+finish+set") {
				t.Fatalf("POST fork --set = %d %q", status, loc)
			}
		}
		f.drain()
		for id, out := range map[string]string{"order-2-again": orig.Output, "order-2-x": `"x"`, "order-2-long": long} {
			if r, _, err := f.e.Describe(f.ctx, id); err != nil || r.Status != durable.StatusDone || r.Output != out {
				t.Errorf("fork %s: %s %s (%v), want done %s", id, r.Status, r.Output, err, out)
			}
		}

		// The diff pages.
		body = f.page("/diff?a=order-2&b=order-2-again", `<b id="identical">identical</b>`, "order-2-again was forked from order-2 at step <b>finish</b>")
		if n := strings.Count(body, `<tr class="diff same">`); n != 3 {
			t.Errorf("the identical diff has %d same rows, want 3:\n%s", n, body)
		}
		body = f.page("/diff?a=order-2&b=order-2-x", "2 same, 1 changed, 0 only in A, 0 only in B; outcome changed",
			`<code>&#34;x&#34;</code>`, html.EscapeString(`"r:two/`+xss+`"`))
		if strings.Contains(body, xss) || strings.Contains(body, `id="identical"`) || !strings.Contains(body, `<tr class="diff changed"><td>3</td>`) {
			t.Errorf("the --set diff:\n%s", body)
		}
		f.page("/diff?a=order-2-long&b=order-2", "<details><summary><code>&#34;declined declined", "…</code></summary><pre>"+html.EscapeString(long)+"</pre></details>")
		f.page("/diff?a=order-1&b=order-2", "0 same, 1 changed, 0 only in A, 2 only in B; outcome changed", `<tr class="diff only-b"><td>3</td>`)

		for _, c := range []struct {
			path   string
			status int
			want   string
		}{
			{"/diff?a=order-2&b=nope", http.StatusNotFound, `no run with id &#34;nope&#34;`},
			{"/diff?a=order-2", http.StatusBadRequest, `a diff needs two run ids, but a is &#34;order-2&#34; and b is &#34;&#34;`},
			{"/diff", http.StatusOK, `id="diff-form"`},
		} {
			if status, body := f.get(c.path); status != c.status || !strings.Contains(body, c.want) || !strings.Contains(body, `name="a" value="`) {
				t.Errorf("GET %s = %d, want %d with %q:\n%s", c.path, status, c.status, c.want, body)
			}
		}
	})
}

// TestForkReadOnly: a read-only dashboard offers no fork and refuses it,
// and still serves the diff page.
func TestForkReadOnly(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, _ string, d *db.DB) {
		f := newFixture(t, d, Options{ReadOnly: true})
		if body := f.page("/runs/order-2", `id="diff-with"`); strings.Contains(body, "fork from here") || strings.Contains(body, "/fork") {
			t.Errorf("a read-only run page offers a fork:\n%s", body)
		}
		if status, _ := f.get("/runs/order-2/fork?step=finish"); status != http.StatusForbidden {
			t.Errorf("read-only fork page = %d, want 403", status)
		}
		if status, body := f.post("/runs/order-2/fork", url.Values{"csrf": {f.ui.opts.CSRF}, "step": {"finish"}, "as": {"order-2-again"}}); status != http.StatusForbidden || !strings.Contains(body, "read-only") {
			t.Errorf("read-only POST fork = %d, want 403:\n%s", status, body)
		}
		if _, _, err := f.e.Describe(f.ctx, "order-2-again"); err == nil {
			t.Error("read-only mode let a fork through")
		}
		f.page("/diff?a=order-2&b=order-2", `<b id="identical">identical</b>`)
	})
}
