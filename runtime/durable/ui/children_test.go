package ui

import (
	"fmt"
	"html"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"skydurable/runtime/codec"
	"skydurable/runtime/db"
	"skydurable/runtime/db/dbtest"
	"skydurable/runtime/durable"
	"skydurable/runtime/durable/view"
	"skydurable/runtime/task"
)

// fanOut is how many children the fan-out parent starts: more than the
// run page shows and more than a page of the list.
const fanOut = PageSize + 7

// xssKey is a child key (so part of a run id) that must reach the pages
// as text.
const xssKey = `<b>only</b>`

// addFamilies registers and runs two parents on f's database: "fan-1"
// starting fanOut children with Durable.all, and "single-1" starting one
// child under xssKey and awaiting it. The children wait for the signal
// "ship", so both parents wait for their children.
func addFamilies(t *testing.T, f *fixture) {
	t.Helper()
	leaf := durable.Register("leaf", codec.Int, codec.Int, func(c *durable.Ctx, n int64) task.Task[int64] {
		return task.Map(durable.AwaitSignal(c, codec.Int, "ship"), func(m int64) int64 { return n + m })
	})
	fan := durable.Register("fan", codec.Int, codec.Int, func(c *durable.Ctx, n int64) task.Task[int64] {
		kids := make([]durable.Child[int64], n)
		for i := range kids {
			kids[i] = durable.Child[int64]{Key: fmt.Sprintf("k-%02d", i), Input: int64(i)}
		}
		return task.Map(durable.All(c, leaf, kids), func(outs []int64) int64 { return int64(len(outs)) })
	})
	single := durable.Register("single", codec.Int, codec.Int, func(c *durable.Ctx, n int64) task.Task[int64] {
		return task.AndThen(durable.StartChild(c, leaf, xssKey, n), func(struct{}) task.Task[int64] {
			return durable.AwaitChild(c, leaf, xssKey)
		})
	})
	f.defs = append(f.defs, leaf.Erase(), fan.Erase(), single.Erase())
	if err := f.e.StartJSON(f.ctx, fan.Erase(), "fan-1", fmt.Sprint(fanOut)); err != nil {
		t.Fatal(err)
	}
	if err := f.e.StartJSON(f.ctx, single.Erase(), "single-1", "1"); err != nil {
		t.Fatal(err)
	}
	f.drain()
	// One child finishes, so the children's statuses differ.
	if err := f.e.Signal(f.ctx, durable.ChildID("fan-1", "k-56"), "ship", "1"); err != nil {
		t.Fatal(err)
	}
	f.drain()
}

var childRow = regexp.MustCompile(`<tr><td><a href="/runs/([^"]+)">[^<]*</a></td><td>([^<]+)</td><td><span class="status ([a-z_]+)">`)

// TestRunPageChildrenAndParent: a parent's page lists its newest children
// (id link, workflow, status) with a link to all of them, which pages
// through the runs list filtered by parent; a child's page links to its
// parent; ids and waiting texts are escaped.
func TestRunPageChildrenAndParent(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, _ string, d *db.DB) {
		f := newFixture(t, d, Options{})
		addFamilies(t, f)
		all, err := f.e.ListRuns(f.ctx, durable.ListFilter{Parent: "fan-1", Limit: 1000})
		if err != nil {
			t.Fatal(err)
		}
		if len(all) != fanOut {
			t.Fatalf("fan-1 has %d children, want %d", len(all), fanOut)
		}

		body := f.page("/runs/fan-1", `id="run-status">waiting<`, "waiting for children of all k-00", `id="children-more"`,
			"the newest 20 are shown", `href="/runs?parent=fan-1"`)
		if strings.Contains(body, `id="parent"`) {
			t.Error("a run without a parent shows a parent link")
		}
		rows := childRow.FindAllStringSubmatch(body, -1)
		if len(rows) != view.ShowChildren {
			t.Fatalf("fan-1's page lists %d children, want %d:\n%s", len(rows), view.ShowChildren, body)
		}
		statuses := map[string]string{}
		for i, row := range rows {
			id, err := url.PathUnescape(row[1])
			if err != nil {
				t.Fatal(err)
			}
			if id != all[i].ID || row[2] != "leaf" {
				t.Errorf("child %d is %s (%s), want %s (leaf), newest first", i, id, row[2], all[i].ID)
			}
			statuses[id] = row[3]
		}
		if statuses["fan-1/k-56"] != "done" || statuses["fan-1/k-55"] != "waiting" {
			t.Errorf("children statuses %v, want k-56 done and k-55 waiting", statuses)
		}

		// "All children" pages through the list filtered by parent.
		var walked []string
		path, pages := "/runs?parent=fan-1", 0
		for path != "" && pages < 5 {
			page := f.page(path, `id="parent-filter"`, `name="parent" value="fan-1"`)
			for _, id := range listed(page) {
				unescaped, err := url.PathUnescape(id)
				if err != nil {
					t.Fatal(err)
				}
				walked = append(walked, unescaped)
			}
			path = ""
			if m := regexp.MustCompile(`id="next" href="([^"]+)"`).FindStringSubmatch(page); m != nil {
				path = html.UnescapeString(m[1])
				if !strings.Contains(path, "parent=fan-1") {
					t.Errorf("the next page %s drops the parent filter", path)
				}
			}
			pages++
		}
		var want []string
		for _, r := range all {
			want = append(want, r.ID)
		}
		if pages != 2 || strings.Join(walked, ",") != strings.Join(want, ",") {
			t.Errorf("walked %d pages of fan-1's children: %v\nwant 2 pages: %v", pages, walked, want)
		}
		if got := listed(f.page("/runs?parent=fan-1&status=done")); len(got) != 1 || got[0] != url.PathEscape("fan-1/k-56") {
			t.Errorf("/runs?parent=fan-1&status=done lists %v, want only fan-1/k-56", got)
		}
		if got := listed(f.page("/runs?parent=nobody")); len(got) != 0 {
			t.Errorf("/runs?parent=nobody lists %v", got)
		}

		// A child's page links to its parent, and has no children.
		f.page("/runs/"+url.PathEscape("fan-1/k-03"), `<a id="parent" href="/runs/fan-1">fan-1</a>`, "no children", "waiting for ship")

		// An id with markup in it is text on every page that shows it.
		childID := durable.ChildID("single-1", xssKey)
		escaped := html.EscapeString(childID)
		for _, p := range []string{"/runs/single-1", "/runs/" + url.PathEscape(childID), "/runs?parent=single-1"} {
			page := f.page(p, escaped)
			if strings.Contains(page, "<b>only") {
				t.Errorf("%s shows a child id as markup:\n%s", p, page)
			}
		}
		f.page("/runs/single-1", "waiting for child "+escaped, `href="/runs/`+url.PathEscape(childID)+`"`)
		f.page("/runs/"+url.PathEscape(childID), `<a id="parent" href="/runs/single-1">single-1</a>`)
		f.page("/runs?parent="+url.QueryEscape(childID), `id="parent-filter"`, "no runs match")
	})
}
