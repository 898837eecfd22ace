// Package tsbench carries the files the binary embeds: the default profile under profiles/ and
// the default rule and dashboard sets under rules/. The packages that read them take an fs.FS,
// so tests can hand them their own.
package tsbench

import "embed"

// Assets holds profiles/ and rules/ as they are in the repository.
//
//go:embed profiles rules
var Assets embed.FS
