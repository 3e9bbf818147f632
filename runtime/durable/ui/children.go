package ui

import (
	"context"

	"skydurable/runtime/durable"
	"skydurable/runtime/durable/view"
)

// childrenView is the run page's children: the newest view.ShowChildren, and
// the address of the whole list when there are more.
type childrenView struct {
	Runs []durable.Run
	More string
}

// children reads the newest children of run id, one more than it shows to
// know whether there are more: one query on the parent index.
func (s *Server) children(ctx context.Context, id string) (childrenView, error) {
	runs, err := s.e.ListRuns(ctx, durable.ListFilter{Parent: id, Limit: view.ShowChildren + 1})
	if err != nil {
		return childrenView{}, err
	}
	var v childrenView
	if len(runs) > view.ShowChildren {
		runs = runs[:view.ShowChildren]
		v.More = "/runs?" + listQuery{Parent: id}.values().Encode()
	}
	v.Runs = runs
	return v, nil
}
