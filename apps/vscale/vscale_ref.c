/* vscale_ref.c - the plain reference of the vscale app.
 *
 * DESIGN
 * ------
 * The reference is the obviously-correct formula, one element at a time, in the
 * app's own precision: y = a * x is a single float multiplication, so every
 * kernel (CPU or GPU) must match it bit for bit and verify compares with ==.
 * An app with reductions would compute here in double and compare with a bound.
 */

float hf__vscale_ref(float a, float x);

float hf__vscale_ref(float a, float x)
{
    return a * x;
}
