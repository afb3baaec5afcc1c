package main

import "github.com/go-logr/logr"

type errString string

func (e errString) Error() string { return string(e) }

type nopSink struct{}

func (nopSink) Init(logr.RuntimeInfo)            {}
func (nopSink) Enabled(int) bool                 { return false }
func (nopSink) Info(int, string, ...any)         {}
func (nopSink) Error(error, string, ...any)      {}
func (n nopSink) WithValues(...any) logr.LogSink { return n }
func (n nopSink) WithName(string) logr.LogSink   { return n }
