package config

import "errors"

// verifyProblems checks the keys of the read-back while the load runs (issue 19): every
// verifyInterval, the data older than verifyDelay that every storage has acked.
func (c *Config) verifyProblems() []error {
	var errs []error
	if c.VerifyDelay < 0 {
		errs = append(errs, errors.New("verifyDelay: must be >= 0 (0: a check during the run reads what every storage has acked)"))
	}
	if c.VerifyInterval < 0 {
		errs = append(errs, errors.New("verifyInterval: must be >= 0 (0 verifies only at the end)"))
	}
	return errs
}
