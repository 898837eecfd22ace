// Package tsbench carries the files the binary embeds: the default profile under profiles/,
// the default rule and dashboard sets under rules/, and the published comparisons' scenarios
// under reproductions/ (their configs and published figures). The packages that read them take an fs.FS,
// so tests can hand them their own.
package tsbench

import "embed"

// Assets holds profiles/, rules/ and reproductions/ as they are in the repository.
//
//go:embed profiles rules reproductions
var Assets embed.FS
