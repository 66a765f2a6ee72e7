"""Metrics (``tf.keras.metrics``)."""
from .metrics import (AUC, Accuracy, BinaryAccuracy, BinaryCrossentropy, CategoricalAccuracy,  # noqa: F401
                      CategoricalCrossentropy, Mean, MeanAbsoluteError, MeanAbsolutePercentageError,
                      MeanMetricWrapper, MeanSquaredError, Metric, Precision, Recall,
                      RootMeanSquaredError, SparseCategoricalAccuracy, SparseCategoricalCrossentropy,
                      SparseTopKCategoricalAccuracy, Sum, TopKCategoricalAccuracy, accuracy,
                      binary_accuracy, categorical_accuracy, deserialize, get, mean_absolute_error,
                      mean_absolute_percentage_error, mean_squared_error, serialize,
                      sparse_categorical_accuracy, sparse_top_k_categorical_accuracy,
                      squeeze_or_expand_to_same_rank, top_k_categorical_accuracy)
