// Package syslog is wnms's syslog listener (decisions §21): it reads RFC
// 3164 and RFC 5424 messages.
package syslog
