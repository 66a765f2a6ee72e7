"""tf.keras.losses: re-exports tapeflow.layers.losses."""
from tapeflow.layers.losses import (KLD, MAE, MAPE, MSE, MSLE, BinaryCrossentropy,  # noqa: F401
                                    CategoricalCrossentropy, CosineSimilarity, Hinge, Huber, KLDivergence, LogCosh,
                                    Loss, LossFunctionWrapper, MeanAbsoluteError, MeanAbsolutePercentageError,
                                    MeanSquaredError, MeanSquaredLogarithmicError, Poisson,
                                    SparseCategoricalCrossentropy, SquaredHinge, binary_crossentropy,
                                    categorical_crossentropy, cosine_similarity, deserialize, get, hinge, huber,
                                    kl_divergence, kld, kullback_leibler_divergence, log_cosh, mae, mape,
                                    mean_absolute_error, mean_absolute_percentage_error, mean_squared_error,
                                    mean_squared_logarithmic_error, mse, msle, poisson, serialize,
                                    sparse_categorical_crossentropy, squared_hinge)
from tapeflow.layers.losses import Dice, Tversky, dice, tversky  # noqa: F401
from tapeflow.layers.losses import (BinaryFocalCrossentropy, CategoricalFocalCrossentropy, CategoricalHinge,  # noqa: F401
                                    binary_focal_crossentropy, categorical_focal_crossentropy, categorical_hinge)
