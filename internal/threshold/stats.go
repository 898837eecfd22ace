package threshold

import "math"

// The distributions the headline's intervals and tests use (headline.go): Student's t for
// several rounds, the normal for one round's within-run estimate. The regularized incomplete
// beta function is evaluated by its continued fraction (Lentz's method), which converges in a
// few dozen terms for the degrees of freedom a run has (1 to a few hundred).

// studentCDF is P(T ≤ t) for Student's t with df degrees of freedom.
func studentCDF(t, df float64) float64 {
	x := df / (df + t*t)
	tail := 0.5 * incompleteBeta(df/2, 0.5, x)
	if t > 0 {
		return 1 - tail
	}
	return tail
}

// studentQuantile is the t with studentCDF(t, df) = p, for p in (0, 1): Newton's method from
// the normal quantile, which converges in a few steps, with bisection as its fallback.
func studentQuantile(p, df float64) float64 {
	x := normalQuantile(p)
	for range 50 {
		step := (studentCDF(x, df) - p) / studentPDF(x, df)
		if math.IsNaN(step) || math.IsInf(step, 0) || math.Abs(step) > 1e3 {
			return studentBisect(p, df)
		}
		x -= step
		if math.Abs(step) < 1e-12*max(1, math.Abs(x)) {
			return x
		}
	}
	return studentBisect(p, df)
}

func studentBisect(p, df float64) float64 {
	lo, hi := -1e6, 1e6
	for range 200 {
		mid := (lo + hi) / 2
		if studentCDF(mid, df) < p {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2
}

// studentPDF is Student's t density with df degrees of freedom.
func studentPDF(x, df float64) float64 {
	a, _ := math.Lgamma((df + 1) / 2)
	b, _ := math.Lgamma(df / 2)
	return math.Exp(a - b - 0.5*math.Log(df*math.Pi) - (df+1)/2*math.Log1p(x*x/df))
}

// normalQuantile is the z with Φ(z) = p.
func normalQuantile(p float64) float64 { return -math.Sqrt2 * math.Erfcinv(2*p) }

// twoSidedP is the two-sided p-value of a statistic t: of Student's t with df degrees of
// freedom, or of the normal for df = +Inf.
func twoSidedP(t, df float64) float64 {
	t = math.Abs(t)
	if math.IsInf(df, 1) {
		return math.Erfc(t / math.Sqrt2)
	}
	return 2 * (1 - studentCDF(t, df))
}

// criticalValue is the two-sided critical value at level alpha: Student's t with df
// degrees of freedom, or the normal for df = +Inf.
func criticalValue(alpha, df float64) float64 {
	if math.IsInf(df, 1) {
		return normalQuantile(1 - alpha/2)
	}
	return studentQuantile(1-alpha/2, df)
}

// incompleteBeta is the regularized incomplete beta function I_x(a, b).
func incompleteBeta(a, b, x float64) float64 {
	switch {
	case x <= 0:
		return 0
	case x >= 1:
		return 1
	}
	la, _ := math.Lgamma(a)
	lb, _ := math.Lgamma(b)
	lab, _ := math.Lgamma(a + b)
	front := math.Exp(lab - la - lb + a*math.Log(x) + b*math.Log(1-x))
	if x < (a+1)/(a+b+2) {
		return front * betaFraction(a, b, x) / a
	}
	return 1 - front*betaFraction(b, a, 1-x)/b
}

// betaFraction is the continued fraction of the incomplete beta function.
func betaFraction(a, b, x float64) float64 {
	const tiny = 1e-300
	c, d := 1.0, 1-(a+b)*x/(a+1)
	if math.Abs(d) < tiny {
		d = tiny
	}
	d = 1 / d
	h := d
	for m := 1.0; m <= 300; m++ {
		m2 := 2 * m
		for _, num := range []float64{
			m * (b - m) * x / ((a + m2 - 1) * (a + m2)),
			-(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1)),
		} {
			d = 1 + num*d
			if math.Abs(d) < tiny {
				d = tiny
			}
			c = 1 + num/c
			if math.Abs(c) < tiny {
				c = tiny
			}
			d = 1 / d
			h *= d * c
		}
		if math.Abs(d*c-1) < 1e-15 {
			break
		}
	}
	return h
}
