/* The one order of the nn layer's float64 sums (src/nn/, f32-norm/):
 * element i added into running sum i mod 8 -- the eight float64 lanes of
 * an AVX-512 register, two AVX2 ones, eight scalars -- and the elements
 * after the last whole group of 8 into a ninth, t; then
 *
 *   ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7)) + t
 *
 * Eight independent chains run at the adder's throughput, and the error
 * is smaller than one running sum's. */
#ifndef MXP_KERNELS_SUM8_H
#define MXP_KERNELS_SUM8_H

static inline double mxp_sum8_fold(const double s[8], double t)
{
    return (((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]))) + t;
}

#endif
