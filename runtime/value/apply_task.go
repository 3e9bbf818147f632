package value

import "skydurable/runtime/task"

// ApplyTask applies a Sky function that must return a Task and yields that
// Task; a runtime error, or a result that is not a Task, becomes a failing
// task. what names the function in the message (e.g. "the handler of POST
// /webhooks").
func ApplyTask(what string, f Value, args ...Value) task.Task[Value] {
	r, err := Apply(f, args...)
	if err != nil {
		return task.Fail[Value](err)
	}
	t, ok := r.(Task)
	if !ok {
		return task.Fail[Value](BadArg(what, "a Task", r))
	}
	return t.T
}
