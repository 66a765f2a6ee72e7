"""A two-layer network fitted to the diabetes data with tf.GradientTape and a hand-written SGD update.

Only the import differs from the TensorFlow version of this script.
Data: Efron et al. (2004), "Least Angle Regression" diabetes data (examples/data/diabetes.npz).
"""
import os

import numpy as np

import tapeflow as tf

HERE = os.path.dirname(os.path.abspath(__file__))


def load_diabetes():
    data = np.load(os.path.join(HERE, "data", "diabetes.npz"))
    x, y = data["x"].astype(np.float32), data["y"].astype(np.float32)
    x = (x - x.mean(0)) / x.std(0)
    y_mean, y_std = y.mean(), y.std()
    return x, (y - y_mean) / y_std, y_std


def main(epochs=200, learning_rate=0.05, seed=0):
    x, y, y_std = load_diabetes()
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(x))
    train, test = order[:350], order[350:]
    tf.random.set_seed(seed)
    w1 = tf.Variable(tf.random.normal([10, 16], stddev=0.3), name="w1")
    b1 = tf.Variable(tf.zeros([16]), name="b1")
    w2 = tf.Variable(tf.random.normal([16, 1], stddev=0.3), name="w2")
    b2 = tf.Variable(tf.zeros([1]), name="b2")
    params = [w1, b1, w2, b2]

    def predict(inputs):
        hidden = tf.nn.relu(inputs @ w1 + b1)
        return tf.squeeze(hidden @ w2 + b2, axis=-1)

    def mse(inputs, targets):
        return tf.reduce_mean(tf.square(predict(inputs) - targets))

    x_train, y_train = tf.constant(x[train]), tf.constant(y[train])
    x_test, y_test = tf.constant(x[test]), tf.constant(y[test])
    for epoch in range(1, epochs + 1):
        with tf.GradientTape() as tape:
            loss = mse(x_train, y_train)
        grads = tape.gradient(loss, params)
        for p, g in zip(params, grads):
            p.assign_sub(learning_rate * g)
        if epoch == 1 or epoch % 25 == 0:
            print(f"epoch {epoch:3d}  train mse {float(loss):.4f}  test mse {float(mse(x_test, y_test)):.4f}")
    rmse = float(tf.sqrt(mse(x_test, y_test))) * y_std
    print(f"test RMSE in disease-progression units: {rmse:.1f}")
    return rmse


if __name__ == "__main__":
    main()
