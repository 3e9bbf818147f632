package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

// httpCommands are the testscript commands of the Std.Http.Server scripts:
//
//	freeport VAR                 set VAR to a TCP port free on 127.0.0.1 now
//	http [-H NAME:VALUE]... METHOD URL [BODY]
//	                             send a request with those headers; stdout is
//	                             "STATUS BODY", then a "Set-Cookie: ..." line
//	                             for each cookie the response sets
//
// http waits (up to 30 s) for the server to accept connections, so a script
// can start `sky run` in the background and send its first request at once.
func httpCommands() map[string]func(ts *testscript.TestScript, neg bool, args []string) {
	return map[string]func(ts *testscript.TestScript, neg bool, args []string){
		"freeport": func(ts *testscript.TestScript, neg bool, args []string) {
			if neg || len(args) != 1 {
				ts.Fatalf("usage: freeport VAR")
			}
			l, err := net.Listen("tcp", "127.0.0.1:0")
			ts.Check(err)
			port := l.Addr().(*net.TCPAddr).Port
			ts.Check(l.Close())
			ts.Setenv(args[0], strconv.Itoa(port))
		},
		"http": func(ts *testscript.TestScript, neg bool, args []string) {
			header := http.Header{}
			for len(args) >= 2 && args[0] == "-H" {
				name, val, ok := strings.Cut(args[1], ":")
				if !ok {
					ts.Fatalf("http -H %s: want NAME:VALUE", args[1])
				}
				header.Add(name, strings.TrimSpace(val))
				args = args[2:]
			}
			if neg || len(args) < 2 || len(args) > 3 {
				ts.Fatalf("usage: http [-H NAME:VALUE]... METHOD URL [BODY]")
			}
			body := ""
			if len(args) == 3 {
				body = args[2]
			}
			resp, err := sendWhenUp(args[0], args[1], body, header)
			if err != nil {
				ts.Fatalf("http %s %s: %v", args[0], args[1], err)
			}
			fmt.Fprintf(ts.Stdout(), "%d %s\n", resp.status, strings.TrimSpace(resp.body))
			for _, c := range resp.header.Values("Set-Cookie") {
				fmt.Fprintf(ts.Stdout(), "Set-Cookie: %s\n", c)
			}
		},
	}
}

// httpReply is what the http command prints of a response.
type httpReply struct {
	status int
	body   string
	header http.Header
}

// sendWhenUp sends one request, retrying while the connection is refused
// (the server is still starting), for up to 30 s.
func sendWhenUp(method, url, body string, header http.Header) (httpReply, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for {
		req, err := http.NewRequestWithContext(ctx, method, url, strings.NewReader(body))
		if err != nil {
			return httpReply{}, err
		}
		req.Header = header.Clone()
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			defer resp.Body.Close()
			data, err := io.ReadAll(resp.Body)
			return httpReply{resp.StatusCode, string(data), resp.Header}, err
		}
		if !errors.Is(err, syscall.ECONNREFUSED) || ctx.Err() != nil {
			return httpReply{}, err
		}
		select {
		case <-ctx.Done():
			return httpReply{}, err
		case <-time.After(20 * time.Millisecond):
		}
	}
}
