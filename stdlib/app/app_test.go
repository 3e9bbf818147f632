package app

import (
	"context"
	"strings"
	"sync"
	"testing"

	"skydurable/runtime/db"
	"skydurable/runtime/db/dbtest"
	"skydurable/runtime/durable"
	"skydurable/runtime/task"
	"skydurable/runtime/value"
	skycodec "skydurable/stdlib/codec"
	skydurable "skydurable/stdlib/durable"
)

func TestMain(m *testing.M) { dbtest.Main(m) }

// lockedBuffer is a strings.Builder safe for the loop and the test.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func call(t *testing.T, ks map[string]value.Kernel, name string, args ...value.Value) value.Value {
	t.Helper()
	k, ok := ks[name]
	if !ok {
		t.Fatalf("no kernel %s", name)
	}
	if len(args) != k.Arity {
		t.Fatalf("%s takes %d arguments, test gave %d", name, k.Arity, len(args))
	}
	v, err := k.Fn(args)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return v
}

func fn(name string, arity int, f func(a []value.Value) (value.Value, error)) value.Value {
	return value.NewFunc(name, arity, f)
}

// counterApp is the Sky counter as kernel calls: the model is an Int, each
// stdin line "inc" adds one, the view is "count: N".
func counterApp(t *testing.T, ks map[string]value.Kernel) value.Value {
	none := call(t, ks, "Cmd_none")
	rec := value.NewRecord(map[string]value.Value{
		"init": fn("init", 1, func([]value.Value) (value.Value, error) { return value.Tuple{int64(0), none}, nil }),
		"update": fn("update", 2, func(a []value.Value) (value.Value, error) {
			n := a[1].(int64)
			if a[0] == "inc" {
				n++
			}
			return value.Tuple{n, none}, nil
		}),
		"view": fn("view", 1, func(a []value.Value) (value.Value, error) {
			return "count: " + value.Show(a[0]) + "\n", nil
		}),
		"subscriptions": fn("subscriptions", 1, func([]value.Value) (value.Value, error) { return call(t, ks, "Sub_none"), nil }),
	})
	app := call(t, ks, "App_cli", rec)
	return call(t, ks, "App_withInput", fn("input", 1, func(a []value.Value) (value.Value, error) { return a[0], nil }), app)
}

// runCounter runs the counter once over input and returns stdout and stderr.
func runCounter(t *testing.T, d *db.DB, id, input string) (string, string) {
	t.Helper()
	out, errOut := &lockedBuffer{}, &lockedBuffer{}
	ks := KernelsWith(Env{Stdin: strings.NewReader(input), Stdout: out, Stderr: errOut})
	intCodec, _ := skycodec.Kernels()["Codec_int"].Fn(nil)
	app := call(t, ks, "App_withDurableId", id, value.Opaque{Kind: "Db", V: d}, intCodec, counterApp(t, ks))
	tv := call(t, ks, "App_run", app).(value.Task)
	if _, err := task.Run(context.Background(), tv.T); err != nil {
		t.Fatalf("App.run: %v\nstderr: %s", err, errOut)
	}
	return out.String(), errOut.String()
}

func TestWithDurableRestoresTheModel(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, driver string, d *db.DB) {
		out, _ := runCounter(t, d, "counter", "inc\ninc\ninc\n")
		if out != "count: 0\ncount: 1\ncount: 2\ncount: 3\n" {
			t.Fatalf("first run printed %q", out)
		}
		out, _ = runCounter(t, d, "counter", "inc\n")
		if out != "count: 3\ncount: 4\n" {
			t.Fatalf("second run printed %q (want the count restored to 3)", out)
		}
		seq, data, found, err := durable.NewSnapshotStore(durable.New(d, durable.Options{})).Load(context.Background(), "counter")
		if err != nil || !found || data != "4" || seq != 4 {
			t.Fatalf("stored snapshot seq=%d data=%q found=%v err=%v; want seq 4, data 4", seq, data, found, err)
		}
	})
}

func TestUndecodableSnapshotBootsFromInitAndIsKept(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, driver string, d *db.DB) {
		store := durable.NewSnapshotStore(durable.New(d, durable.Options{}))
		ctx := context.Background()
		if _, err := store.Save(ctx, "counter", 7, `{"count":"seven"}`); err != nil {
			t.Fatal(err)
		}
		out, errOut := runCounter(t, d, "counter", "inc\ninc\n")
		if out != "count: 0\ncount: 1\ncount: 2\n" {
			t.Fatalf("printed %q (want a boot from init)", out)
		}
		for _, want := range []string{`snapshot "counter" (sequence 7) does not decode`, "expected an integer", "will not be overwritten"} {
			if !strings.Contains(errOut, want) {
				t.Fatalf("stderr does not mention %q:\n%s", want, errOut)
			}
		}
		seq, data, _, err := store.Load(ctx, "counter")
		if err != nil || seq != 7 || data != `{"count":"seven"}` {
			t.Fatalf("stored snapshot changed: seq=%d data=%q err=%v", seq, data, err)
		}
	})
}

func TestSnapshotKernelsRoundTrip(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, driver string, d *db.DB) {
		ks := map[string]value.Kernel{}
		for _, k := range skydurable.SnapshotKernels() {
			ks[k.Name] = k
		}
		strCodec, _ := skycodec.Kernels()["Codec_string"].Fn(nil)
		dbv := value.Opaque{Kind: "Db", V: d}
		run := func(v value.Value) value.Value {
			t.Helper()
			r, err := task.Run(context.Background(), v.(value.Task).T)
			if err != nil {
				t.Fatal(err)
			}
			return r
		}
		if got := run(call(t, ks, "Durable_loadSnapshot", dbv, "greeting", strCodec)); value.Show(got) != "Nothing" {
			t.Fatalf("load before any save gave %s", value.Show(got))
		}
		run(call(t, ks, "Durable_saveSnapshotAuto", dbv, "greeting", strCodec, "hello"))
		run(call(t, ks, "Durable_saveSnapshotAuto", dbv, "greeting", strCodec, "hello again"))
		if got := value.Show(run(call(t, ks, "Durable_loadSnapshot", dbv, "greeting", strCodec))); got != `Just "hello again"` {
			t.Fatalf("load gave %s", got)
		}
		intCodec, _ := skycodec.Kernels()["Codec_int"].Fn(nil)
		_, err := task.Run(context.Background(), call(t, ks, "Durable_loadSnapshot", dbv, "greeting", intCodec).(value.Task).T)
		if err == nil || !strings.Contains(err.Error(), `Decode: durable: snapshot "greeting" does not decode: $: expected an integer, found "hello again"`) {
			t.Fatalf("decoding with the wrong codec: %v", err)
		}
	})
}

func TestKernelsRejectBadArguments(t *testing.T) {
	ks := Kernels()
	cases := []struct {
		name string
		args []value.Value
		want string
	}{
		{"Sub_every", []value.Value{int64(0), "Tick"}, "Sub.every needs a positive interval in milliseconds, but got 0; hint: Sub.every 1000 Tick ticks once a second"},
		{"Sub_every", []value.Value{"1000", "Tick"}, `Sub.every expects an Int interval in milliseconds, but got "1000" (String)`},
		{"Cmd_perform", []value.Value{int64(1), int64(2)}, "Cmd.perform expects a Task, but got 1 (Int)"},
		{"App_cli", []value.Value{value.NewRecord(map[string]value.Value{"init": int64(1)})}, "App.cli expects a function in the field init, but got 1 (Int)"},
		{"App_run", []value.Value{"app"}, `App.run expects an App (from App.cli), but got "app" (String)`},
		{"App_withDurableId", []value.Value{"", value.Unit{}, value.Unit{}, value.Unit{}}, `App.withDurableId expects a non-empty String snapshot id, but got "" (String)`},
	}
	for _, c := range cases {
		_, err := ks[c.name].Fn(c.args)
		if err == nil || err.Error() != c.want {
			t.Errorf("%s: error %v\nwant %s", c.name, err, c.want)
		}
	}
}

func TestModulesDeclareEveryKernel(t *testing.T) {
	ks := Kernels()
	used := map[string]bool{}
	for name, src := range Modules() {
		for _, part := range strings.Split(src, `Ffi.kernel "`)[1:] {
			k := part[:strings.Index(part, `"`)]
			if _, ok := ks[k]; !ok {
				t.Errorf("%s binds kernel %s, which does not exist", name, k)
			}
			used[k] = true
		}
	}
	for k := range ks {
		if !used[k] {
			t.Errorf("kernel %s is not bound by any module", k)
		}
	}
}

func TestUnreadableSnapshotStoreFailsTheRun(t *testing.T) {
	d := dbtest.Open(t, "sqlite")
	d.Close()
	ks := KernelsWith(Env{Stdin: strings.NewReader(""), Stdout: &lockedBuffer{}, Stderr: &lockedBuffer{}})
	intCodec, _ := skycodec.Kernels()["Codec_int"].Fn(nil)
	app := call(t, ks, "App_withDurableId", "counter", value.Opaque{Kind: "Db", V: d}, intCodec, counterApp(t, ks))
	_, err := task.Run(context.Background(), call(t, ks, "App_run", app).(value.Task).T)
	if err == nil || !strings.HasPrefix(err.Error(), `Unavailable: App.withDurable: cannot read the snapshot "counter": `) {
		t.Fatalf("error %v", err)
	}
}

func TestWithDurableDefaultIDIsDefault(t *testing.T) {
	d := dbtest.Open(t, "sqlite")
	ks := KernelsWith(Env{Stdin: strings.NewReader("inc\n"), Stdout: &lockedBuffer{}, Stderr: &lockedBuffer{}})
	intCodec, _ := skycodec.Kernels()["Codec_int"].Fn(nil)
	app := call(t, ks, "App_withDurable", value.Opaque{Kind: "Db", V: d}, intCodec, counterApp(t, ks))
	if _, err := task.Run(context.Background(), call(t, ks, "App_run", app).(value.Task).T); err != nil {
		t.Fatal(err)
	}
	_, data, found, err := durable.NewSnapshotStore(durable.New(d, durable.Options{})).Load(context.Background(), "default")
	if err != nil || !found || data != "1" {
		t.Fatalf("snapshot under default: found=%v data=%q err=%v", found, data, err)
	}
}
