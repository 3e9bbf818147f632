package host

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"time"

	rapp "skydurable/runtime/app"
	"skydurable/runtime/task"
	"skydurable/runtime/value"
)

// streamGrace is how long the child's exit waits for its output streams to
// end: a child's own pipes end as it exits, so wait then readFrom sees the
// whole output and eof; a grandchild holding them open does not hold wait.
const streamGrace = 100 * time.Millisecond

// defaultRing is how many of the last bytes of each output stream a child
// keeps when its Command does not say (real Sky's 1 MiB).
const defaultRing = 1 << 20

const processKind = "Process"

// child is a Process value: a started program, its stdin, and one ring per
// output stream, filled by a goroutine each until the stream ends.
type child struct {
	program string
	cmd     *exec.Cmd
	out     [2]*ring // Stdout, Stderr

	mu     sync.Mutex
	stdin  io.WriteCloser // nil once closeStdin or close
	closed bool
	reader string // "Task" or "Sub": how the output is read, fixed by the first read
	// The events subscription's position: the next byte of each stream,
	// and whether it has delivered Exited.
	evNext   [2]int64
	evExited bool

	exited chan struct{} // closed when the child has exited and was reaped, and its streams ended (or streamGrace passed)
	state  *os.ProcessState
}

// spawnKernels are Sky.Core.Process's streaming functions: spawn a child,
// read its output, write its stdin, signal, wait for and close it.
func spawnKernels() []value.Kernel {
	return []value.Kernel{
		{Name: "Process_spawn", Arity: 1, Fn: func(a []value.Value) (value.Value, error) {
			spec, ok := a[0].(*value.Record)
			if !ok {
				return nil, value.BadArg("Process.spawn", "a Command", a[0])
			}
			return value.Task{T: task.From(func(context.Context) (value.Value, error) { return spawn(spec) })}, nil
		}},
		{Name: "Process_readFrom", Arity: 3, Fn: func(a []value.Value) (value.Value, error) {
			return readTask("Process.readFrom", a[0], a[1], a[2], 0)
		}},
		{Name: "Process_readWithin", Arity: 4, Fn: func(a []value.Value) (value.Value, error) {
			ms, ok := a[0].(int64)
			if !ok {
				return nil, value.BadArg("Process.readWithin", "an Int of milliseconds", a[0])
			}
			if ms < 0 {
				return value.Task{T: task.Fail[value.Value](task.Errorf(task.InvalidInput, "Process.readWithin %d: the wait is negative; hint: 0 reads what is there now", ms))}, nil
			}
			return readTask("Process.readWithin", a[1], a[2], a[3], time.Duration(ms)*time.Millisecond)
		}},
		childTask("write", 2, func(_ context.Context, c *child, a []value.Value) (value.Value, error) {
			text, err := stringArg("Process.write", a[1])
			if err != nil {
				return nil, err
			}
			return value.Unit{}, c.write(text)
		}),
		childTask("closeStdin", 1, func(_ context.Context, c *child, _ []value.Value) (value.Value, error) {
			return value.Unit{}, c.closeStdin()
		}),
		childTask("kill", 2, func(_ context.Context, c *child, a []value.Value) (value.Value, error) {
			sig, ok := a[1].(value.Ctor)
			if !ok {
				return nil, value.BadArg("Process.kill", "a Signal", a[1])
			}
			select {
			case <-c.exited:
				return value.Unit{}, nil
			default:
			}
			if err := signalGroup(c.cmd.Process, sig.Name); err != nil {
				return nil, task.Errorf(task.Io, "Process.kill %q %s: %w", c.program, sig.Name, err)
			}
			return value.Unit{}, nil
		}),
		childTask("wait", 1, func(ctx context.Context, c *child, _ []value.Value) (value.Value, error) {
			select {
			case <-c.exited:
				return exitStatus(c.state), nil
			case <-ctx.Done():
				return nil, task.As(ctx.Err())
			}
		}),
		childTask("pid", 1, func(_ context.Context, c *child, _ []value.Value) (value.Value, error) {
			return int64(c.cmd.Process.Pid), nil
		}),
		{Name: "Process_events", Arity: 2, Fn: func(a []value.Value) (value.Value, error) {
			c, err := childArg("Process.events", a[0])
			if err != nil {
				return nil, err
			}
			if _, ok := a[1].(value.Func); !ok {
				return nil, value.BadArg("Process.events", "a function from Event to msg", a[1])
			}
			key := fmt.Sprintf("Process.events %q (pid %d)", c.program, c.cmd.Process.Pid)
			return rapp.SubValue(rapp.FeedSub(rapp.Feed{Key: key, Next: c.nextEvent, ToMsg: a[1]})), nil
		}},
		{Name: "Process_close", Arity: 1, Fn: func(a []value.Value) (value.Value, error) {
			c, err := childArg("Process.close", a[0])
			if err != nil {
				return nil, err
			}
			return value.Task{T: task.From(func(context.Context) (value.Value, error) { return value.Unit{}, c.close() })}, nil
		}},
	}
}

// childTask is a kernel `Process_<name>` whose first argument is a Process:
// a Task that runs fn, or fails InvalidInput once the process is closed.
func childTask(name string, arity int, fn func(ctx context.Context, c *child, a []value.Value) (value.Value, error)) value.Kernel {
	what := "Process." + name
	return value.Kernel{Name: "Process_" + name, Arity: arity, Fn: func(a []value.Value) (value.Value, error) {
		c, err := childArg(what, a[0])
		if err != nil {
			return nil, err
		}
		return value.Task{T: task.From(func(ctx context.Context) (value.Value, error) {
			if err := c.open(what); err != nil {
				return nil, err
			}
			return fn(ctx, c, a)
		})}, nil
	}}
}

func childArg(fn string, v value.Value) (*child, error) {
	if o, ok := v.(value.Opaque); ok {
		if c, ok := o.V.(*child); ok {
			return c, nil
		}
	}
	return nil, value.BadArg(fn, "a Process", v)
}

// open fails InvalidInput once the process was closed.
func (c *child) open(what string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return task.Errorf(task.InvalidInput, "%s: the process %q was closed; hint: close a process only when done with it", what, c.program)
	}
	return nil
}

// spawn starts the program a CommandSpec record names, in its own process
// group, with pipes for its three standard streams.
func spawn(spec *value.Record) (value.Value, error) {
	field := func(name string) value.Value { v, _ := spec.Get(name); return v }
	program, err := stringArg("Process.spawn", field("program"))
	if err != nil {
		return nil, err
	}
	args, err := stringList("Process.spawn", field("args"))
	if err != nil {
		return nil, err
	}
	size, _ := field("bufferSize").(int64)
	cwd, _ := field("cwd").(string)
	switch {
	case program == "":
		return nil, task.New(task.InvalidInput, `Process.spawn: the program name is empty; hint: Process.command "ls"`)
	case size < 0:
		return nil, task.Errorf(task.InvalidInput, "Process.spawn %q: withBufferSize %d is negative", program, size)
	case size == 0:
		size = defaultRing
	}
	if cwd != "" {
		if st, err := os.Stat(cwd); err != nil || !st.IsDir() {
			return nil, task.Errorf(task.InvalidInput, "Process.spawn %q: withCwd %q is not a directory", program, cwd)
		}
	}
	env, err := childEnv(field("env"), field("clearEnv") == true)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(program, args...)
	cmd.Dir, cmd.Env, cmd.SysProcAttr = cwd, env, groupAttr()
	c := &child{program: program, cmd: cmd, exited: make(chan struct{})}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, osError("Process.spawn", program, err)
	}
	// The child writes into os.Pipe write ends, read here by one goroutine
	// per stream: exec's own copying would tie wait to the streams' end,
	// which a grandchild holding them open can put off for ever.
	var readEnds, writeEnds [2]*os.File
	for i := range readEnds {
		if readEnds[i], writeEnds[i], err = os.Pipe(); err != nil {
			closeAll(readEnds[:], writeEnds[:])
			stdin.Close()
			return nil, osError("Process.spawn", program, err)
		}
		c.out[i] = newRing(int(size))
	}
	cmd.Stdout, cmd.Stderr = writeEnds[0], writeEnds[1]
	if err := cmd.Start(); err != nil {
		closeAll(readEnds[:], writeEnds[:])
		return nil, osError("Process.spawn", program, err)
	}
	closeAll(writeEnds[:])
	c.stdin = stdin
	for i, r := range readEnds {
		go c.out[i].fill(r)
	}
	go func() {
		_ = cmd.Wait() // the status is in ProcessState; a non-zero exit is not an error here
		c.state = cmd.ProcessState
		grace, stop := context.WithTimeout(context.Background(), streamGrace)
		defer stop()
		for _, r := range c.out {
			select {
			case <-r.ended:
			case <-grace.Done():
			}
		}
		close(c.exited)
	}()
	return value.Opaque{Kind: processKind, V: c}, nil
}

func closeAll(groups ...[]*os.File) {
	for _, files := range groups {
		for _, f := range files {
			if f != nil {
				f.Close()
			}
		}
	}
}

// childEnv is the environment a Command gives: this program's (unless
// cleared) then its withEnv pairs, a later value of a name replacing an
// earlier one (os/exec keeps the last).
func childEnv(pairs value.Value, clear bool) ([]string, error) {
	var env []string
	if !clear {
		env = os.Environ()
	}
	list, _ := pairs.(*value.List)
	for _, p := range list.Slice() {
		kv, ok := p.(value.Tuple)
		if !ok || len(kv) != 2 {
			return nil, value.BadArg("Process.withEnv", "a ( String, String )", p)
		}
		name, _ := kv[0].(string)
		val, _ := kv[1].(string)
		if name == "" {
			return nil, task.Errorf(task.InvalidInput, "Process.withEnv: an empty variable name (value %q)", val)
		}
		env = append(env, name+"="+val)
	}
	if clear && env == nil {
		env = []string{} // not nil: nil would mean this program's environment
	}
	return env, nil
}

func (c *child) write(text string) error {
	c.mu.Lock()
	stdin := c.stdin
	c.mu.Unlock()
	if stdin == nil {
		return task.Errorf(task.InvalidInput, "Process.write %q: its standard input is closed", c.program)
	}
	if _, err := io.WriteString(stdin, text); err != nil {
		return task.Errorf(task.Io, "Process.write %q: %w", c.program, err)
	}
	return nil
}

func (c *child) closeStdin() error {
	c.mu.Lock()
	stdin := c.stdin
	c.stdin = nil
	c.mu.Unlock()
	if stdin != nil {
		stdin.Close()
	}
	return nil
}

// close kills the child's group if it still runs, waits for it, and marks
// the process closed; a second close succeeds and does nothing.
func (c *child) close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	stdin := c.stdin
	c.stdin = nil
	c.mu.Unlock()
	if stdin != nil {
		stdin.Close()
	}
	select {
	case <-c.exited:
	default:
		if err := signalGroup(c.cmd.Process, "Kill"); err != nil {
			return task.Errorf(task.Io, "Process.close %q: %w", c.program, err)
		}
		<-c.exited
	}
	return nil
}
