"""Metrics (``tf.keras.metrics``), one family per module, and their lookup by name (``get``)."""
from .. import backend
from ..losses import squeeze_or_expand_to_same_rank  # noqa: F401  (Keras's rule, also public here)
from ..serialization_lib import module_accessors
from .accuracy_metrics import (Accuracy, BinaryAccuracy, CategoricalAccuracy, SparseCategoricalAccuracy,  # noqa: F401
                               SparseTopKCategoricalAccuracy, TopKCategoricalAccuracy, accuracy, binary_accuracy,
                               categorical_accuracy, sparse_categorical_accuracy, sparse_top_k_categorical_accuracy,
                               top_k_categorical_accuracy)
from .base_metric import Metric  # noqa: F401
from .confusion_metrics import (AUC, FalseNegatives, FalsePositives, Precision, Recall, TrueNegatives,
                                TruePositives)
from .constrained_metrics import (PrecisionAtRecall, RecallAtPrecision, SensitivityAtSpecificity,
                                  SpecificityAtSensitivity)
from .f_score_metrics import F1Score, FBetaScore
from .iou_metrics import BinaryIoU, IoU, MeanIoU, OneHotIoU, OneHotMeanIoU
from .r2_metrics import R2Score
from .probabilistic_metrics import BinaryCrossentropy, CategoricalCrossentropy, SparseCategoricalCrossentropy
from .reduction_metrics import Mean, MeanMetricWrapper, Sum
from .regression_metrics import (MeanAbsoluteError, MeanAbsolutePercentageError, MeanSquaredError,  # noqa: F401
                                 RootMeanSquaredError, mean_absolute_error, mean_absolute_percentage_error,
                                 mean_squared_error)

_FUNCTIONS = {
    "accuracy": accuracy, "binary_accuracy": binary_accuracy, "categorical_accuracy": categorical_accuracy,
    "sparse_categorical_accuracy": sparse_categorical_accuracy,
    "top_k_categorical_accuracy": top_k_categorical_accuracy,
    "sparse_top_k_categorical_accuracy": sparse_top_k_categorical_accuracy,
    "mean_squared_error": mean_squared_error, "mse": mean_squared_error, "MSE": mean_squared_error,
    "mean_absolute_error": mean_absolute_error, "mae": mean_absolute_error, "MAE": mean_absolute_error,
    "mean_absolute_percentage_error": mean_absolute_percentage_error, "mape": mean_absolute_percentage_error,
    "MAPE": mean_absolute_percentage_error,
}
_CLASSES = {cls.__name__: cls for cls in (
    Sum, Mean, MeanMetricWrapper, Accuracy, BinaryAccuracy, CategoricalAccuracy, SparseCategoricalAccuracy,
    TopKCategoricalAccuracy, SparseTopKCategoricalAccuracy, MeanSquaredError, MeanAbsoluteError,
    MeanAbsolutePercentageError, RootMeanSquaredError, BinaryCrossentropy, CategoricalCrossentropy,
    SparseCategoricalCrossentropy, Precision, Recall, AUC, TruePositives, FalsePositives, TrueNegatives,
    FalseNegatives, SensitivityAtSpecificity, SpecificityAtSensitivity, PrecisionAtRecall, RecallAtPrecision, F1Score, FBetaScore, R2Score, IoU, MeanIoU, BinaryIoU,
    OneHotIoU, OneHotMeanIoU)}
_SNAKE_CLASSES = {backend.snake_case(name): cls for name, cls in _CLASSES.items()}
_SNAKE_CLASSES["auc"] = AUC


# Names resolve as Keras does: functions, then classes, then snake-case class names, then registered objects.
serialize, deserialize, get = module_accessors({**_FUNCTIONS, **_CLASSES}, "metric",
                                               names={**_SNAKE_CLASSES, **_CLASSES, **_FUNCTIONS}, registered=True)
