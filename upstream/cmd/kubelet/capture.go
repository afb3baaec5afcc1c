package main

import (
	"fmt"
	"sync"

	"github.com/go-logr/logr"
)

// failureLog collects what the reconcile loop logs about pods it failed to unprepare:
// upstream only logs these errors, and drasim reports them per pod.
type failureLog struct {
	mu     sync.Mutex
	failed map[string]string // pod UID -> error text
}

// captureSink passes every log call on to base and notes calls that carry both a
// "podUID" and an "err" value.
type captureSink struct {
	base logr.LogSink
	log  *failureLog
}

func (s *captureSink) Init(info logr.RuntimeInfo) { s.base.Init(info) }

func (s *captureSink) Enabled(level int) bool { return level == 0 || s.base.Enabled(level) }

func (s *captureSink) Info(level int, msg string, keysAndValues ...any) {
	s.note(keysAndValues)
	if s.base.Enabled(level) {
		s.base.Info(level, msg, keysAndValues...)
	}
}

func (s *captureSink) Error(err error, msg string, keysAndValues ...any) {
	s.base.Error(err, msg, keysAndValues...)
}

func (s *captureSink) WithValues(keysAndValues ...any) logr.LogSink {
	return &captureSink{base: s.base.WithValues(keysAndValues...), log: s.log}
}

func (s *captureSink) WithName(name string) logr.LogSink {
	return &captureSink{base: s.base.WithName(name), log: s.log}
}

func (s *captureSink) note(keysAndValues []any) {
	var uid, text string
	for i := 0; i+1 < len(keysAndValues); i += 2 {
		switch keysAndValues[i] {
		case "podUID":
			uid = fmt.Sprint(keysAndValues[i+1])
		case "err":
			if err, ok := keysAndValues[i+1].(error); ok {
				text = err.Error()
			} else {
				text = fmt.Sprint(keysAndValues[i+1])
			}
		}
	}
	if uid == "" || text == "" {
		return
	}
	s.log.mu.Lock()
	defer s.log.mu.Unlock()
	s.log.failed[uid] = text
}
