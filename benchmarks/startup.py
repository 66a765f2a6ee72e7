"""Start-up: `import tapeflow` and the first gradient in a fresh process.

Each measurement runs in a new interpreter. "warm" means numba's on-disk cache
already holds the kernels (run this script twice; the first run warms it).
"""
import json
import subprocess
import sys

PROBE = r"""
import json, time
t0 = time.perf_counter()
import tapeflow as tf
t1 = time.perf_counter()
x = tf.Variable(tf.random.normal([32, 16]))
w = tf.Variable(tf.random.normal([16, 8]))
with tf.GradientTape() as tape:
    y = tf.reduce_mean(tf.nn.softmax(tf.nn.relu(x @ w)))
tape.gradient(y, [x, w])
t2 = time.perf_counter()
print(json.dumps({"import": t1 - t0, "first_gradient": t2 - t1}))
"""


def run_probe():
    out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, check=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def main():
    first = run_probe()
    warm = min((run_probe() for _ in range(3)), key=lambda r: r["import"] + r["first_gradient"])
    print(f"{'measurement':44s} {'seconds':>8s}")
    print(f"{'import tapeflow':44s} {warm['import']:8.3f}   (target < 0.5)")
    print(f"{'first gradient after import, warm cache':44s} {warm['first_gradient']:8.3f}   (target < 1)")
    print(f"{'first run of this script (cache maybe cold)':44s} {first['import'] + first['first_gradient']:8.3f}")


if __name__ == "__main__":
    main()
