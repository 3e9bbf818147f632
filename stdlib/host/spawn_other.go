//go:build !unix

package host

import (
	"errors"
	"os"
	"syscall"

	"skydurable/runtime/value"
)

// groupAttr: without Unix process groups a child runs in this program's.
func groupAttr() *syscall.SysProcAttr { return nil }

// signalGroup can only kill the child itself here: other signals are not
// delivered on this system.
func signalGroup(p *os.Process, name string) error {
	if name != "Kill" {
		return errors.New("only Kill can be sent on this system")
	}
	if err := p.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return err
	}
	return nil
}

// exitStatus is how a reaped child ended: its exit code.
func exitStatus(st *os.ProcessState) value.Value {
	return value.Ctor{Name: "ExitCode", Args: []value.Value{int64(st.ExitCode())}}
}
