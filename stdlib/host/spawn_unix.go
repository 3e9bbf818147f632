//go:build unix

package host

import (
	"errors"
	"os"
	"syscall"

	"skydurable/runtime/value"
)

// groupAttr starts a child in a process group of its own, so signalGroup
// reaches the programs it starts too.
func groupAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

// signalGroup sends the named Signal to the child's process group; a group
// that is already gone is not an error.
func signalGroup(p *os.Process, name string) error {
	sig := map[string]syscall.Signal{"Interrupt": syscall.SIGINT, "Terminate": syscall.SIGTERM, "Kill": syscall.SIGKILL, "Hangup": syscall.SIGHUP}[name]
	if sig == 0 {
		return errors.New("not a Signal")
	}
	if err := syscall.Kill(-p.Pid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		return err
	}
	return nil
}

// exitStatus is how a reaped child ended, as an ExitStatus.
func exitStatus(st *os.ProcessState) value.Value {
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return value.Ctor{Name: "Signalled", Args: []value.Value{int64(ws.Signal())}}
	}
	return value.Ctor{Name: "ExitCode", Args: []value.Value{int64(st.ExitCode())}}
}
