"""Losses (``tf.keras.losses``)."""
from .losses import Dice, Tversky, dice, tversky  # noqa: F401
from .losses import (KLD, MAE, MAPE, MSE, MSLE, BinaryCrossentropy, CategoricalCrossentropy,  # noqa: F401
                     CosineSimilarity, Hinge, Huber, KLDivergence, LogCosh, Loss, LossFunctionWrapper,
                     MeanAbsoluteError, MeanAbsolutePercentageError, MeanSquaredError,
                     MeanSquaredLogarithmicError, Poisson, SparseCategoricalCrossentropy, SquaredHinge,
                     binary_crossentropy, categorical_crossentropy, cosine_similarity, deserialize, get,
                     hinge, huber, kl_divergence, kld, kullback_leibler_divergence, log_cosh, mae, mape,
                     mean_absolute_error, mean_absolute_percentage_error, mean_squared_error,
                     mean_squared_logarithmic_error, mse, msle, poisson, reduce_values,
                     reduce_weighted_values, serialize, sparse_categorical_crossentropy, squared_hinge,
                     squeeze_or_expand_to_same_rank, standardize_reduction)
from .losses import (BinaryFocalCrossentropy, CategoricalFocalCrossentropy, CategoricalHinge,  # noqa: F401
                     binary_focal_crossentropy, categorical_focal_crossentropy, categorical_hinge)
