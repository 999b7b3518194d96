from tfrview.core.tfdv.proto import path_pb2 as _path_pb2
from tfrview.core.tfdv.proto import schema_pb2 as _schema_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class AnomalyInfo(_message.Message):
    __slots__ = ("path", "severity", "description", "short_description", "reason")
    class Severity(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
        __slots__ = ()
        UNKNOWN: _ClassVar[AnomalyInfo.Severity]
        WARNING: _ClassVar[AnomalyInfo.Severity]
        ERROR: _ClassVar[AnomalyInfo.Severity]
    UNKNOWN: AnomalyInfo.Severity
    WARNING: AnomalyInfo.Severity
    ERROR: AnomalyInfo.Severity
    class Type(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
        __slots__ = ()
        UNKNOWN_TYPE: _ClassVar[AnomalyInfo.Type]
        MULTIPLE_REASONS: _ClassVar[AnomalyInfo.Type]
        BOOL_TYPE_BIG_INT: _ClassVar[AnomalyInfo.Type]
        BOOL_TYPE_BYTES_NOT_INT: _ClassVar[AnomalyInfo.Type]
        BOOL_TYPE_BYTES_NOT_STRING: _ClassVar[AnomalyInfo.Type]
        BOOL_TYPE_FLOAT_NOT_INT: _ClassVar[AnomalyInfo.Type]
        BOOL_TYPE_FLOAT_NOT_STRING: _ClassVar[AnomalyInfo.Type]
        BOOL_TYPE_INT_NOT_STRING: _ClassVar[AnomalyInfo.Type]
        BOOL_TYPE_SMALL_INT: _ClassVar[AnomalyInfo.Type]
        BOOL_TYPE_STRING_NOT_INT: _ClassVar[AnomalyInfo.Type]
        BOOL_TYPE_UNEXPECTED_STRING: _ClassVar[AnomalyInfo.Type]
        BOOL_TYPE_UNEXPECTED_FLOAT: _ClassVar[AnomalyInfo.Type]
        BOOL_TYPE_INVALID_CONFIG: _ClassVar[AnomalyInfo.Type]
        ENUM_TYPE_BYTES_NOT_STRING: _ClassVar[AnomalyInfo.Type]
        ENUM_TYPE_FLOAT_NOT_STRING: _ClassVar[AnomalyInfo.Type]
        ENUM_TYPE_INT_NOT_STRING: _ClassVar[AnomalyInfo.Type]
        ENUM_TYPE_INVALID_UTF8: _ClassVar[AnomalyInfo.Type]
        ENUM_TYPE_UNEXPECTED_STRING_VALUES: _ClassVar[AnomalyInfo.Type]
        FEATURE_TYPE_HIGH_NUMBER_VALUES: _ClassVar[AnomalyInfo.Type]
        FEATURE_TYPE_LOW_FRACTION_PRESENT: _ClassVar[AnomalyInfo.Type]
        FEATURE_TYPE_LOW_NUMBER_PRESENT: _ClassVar[AnomalyInfo.Type]
        FEATURE_TYPE_LOW_NUMBER_VALUES: _ClassVar[AnomalyInfo.Type]
        FEATURE_TYPE_NOT_PRESENT: _ClassVar[AnomalyInfo.Type]
        FEATURE_TYPE_NO_VALUES: _ClassVar[AnomalyInfo.Type]
        FEATURE_TYPE_UNEXPECTED_REPEATED: _ClassVar[AnomalyInfo.Type]
        FEATURE_TYPE_HIGH_UNIQUE: _ClassVar[AnomalyInfo.Type]
        FEATURE_TYPE_LOW_UNIQUE: _ClassVar[AnomalyInfo.Type]
        FEATURE_TYPE_NO_UNIQUE: _ClassVar[AnomalyInfo.Type]
        FLOAT_TYPE_BIG_FLOAT: _ClassVar[AnomalyInfo.Type]
        FLOAT_TYPE_NOT_FLOAT: _ClassVar[AnomalyInfo.Type]
        FLOAT_TYPE_SMALL_FLOAT: _ClassVar[AnomalyInfo.Type]
        FLOAT_TYPE_STRING_NOT_FLOAT: _ClassVar[AnomalyInfo.Type]
        FLOAT_TYPE_NON_STRING: _ClassVar[AnomalyInfo.Type]
        FLOAT_TYPE_UNKNOWN_TYPE_NUMBER: _ClassVar[AnomalyInfo.Type]
        FLOAT_TYPE_HAS_NAN: _ClassVar[AnomalyInfo.Type]
        FLOAT_TYPE_HAS_INF: _ClassVar[AnomalyInfo.Type]
        INT_TYPE_BIG_INT: _ClassVar[AnomalyInfo.Type]
        INT_TYPE_INT_EXPECTED: _ClassVar[AnomalyInfo.Type]
        INT_TYPE_NOT_INT_STRING: _ClassVar[AnomalyInfo.Type]
        INT_TYPE_NOT_STRING: _ClassVar[AnomalyInfo.Type]
        INT_TYPE_SMALL_INT: _ClassVar[AnomalyInfo.Type]
        INT_TYPE_STRING_EXPECTED: _ClassVar[AnomalyInfo.Type]
        INT_TYPE_UNKNOWN_TYPE_NUMBER: _ClassVar[AnomalyInfo.Type]
        LOW_SUPPORTED_IMAGE_FRACTION: _ClassVar[AnomalyInfo.Type]
        SCHEMA_MISSING_COLUMN: _ClassVar[AnomalyInfo.Type]
        SCHEMA_NEW_COLUMN: _ClassVar[AnomalyInfo.Type]
        SCHEMA_TRAINING_SERVING_SKEW: _ClassVar[AnomalyInfo.Type]
        STRING_TYPE_NOW_FLOAT: _ClassVar[AnomalyInfo.Type]
        STRING_TYPE_NOW_INT: _ClassVar[AnomalyInfo.Type]
        COMPARATOR_CONTROL_DATA_MISSING: _ClassVar[AnomalyInfo.Type]
        COMPARATOR_TREATMENT_DATA_MISSING: _ClassVar[AnomalyInfo.Type]
        COMPARATOR_L_INFTY_HIGH: _ClassVar[AnomalyInfo.Type]
        COMPARATOR_JENSEN_SHANNON_DIVERGENCE_HIGH: _ClassVar[AnomalyInfo.Type]
        COMPARATOR_NORMALIZED_ABSOLUTE_DIFFERENCE_HIGH: _ClassVar[AnomalyInfo.Type]
        NO_DATA_IN_SPAN: _ClassVar[AnomalyInfo.Type]
        SPARSE_FEATURE_MISSING_VALUE: _ClassVar[AnomalyInfo.Type]
        SPARSE_FEATURE_MISSING_INDEX: _ClassVar[AnomalyInfo.Type]
        SPARSE_FEATURE_LENGTH_MISMATCH: _ClassVar[AnomalyInfo.Type]
        SPARSE_FEATURE_NAME_COLLISION: _ClassVar[AnomalyInfo.Type]
        SEMANTIC_DOMAIN_UPDATE: _ClassVar[AnomalyInfo.Type]
        COMPARATOR_LOW_NUM_EXAMPLES: _ClassVar[AnomalyInfo.Type]
        COMPARATOR_HIGH_NUM_EXAMPLES: _ClassVar[AnomalyInfo.Type]
        DATASET_LOW_NUM_EXAMPLES: _ClassVar[AnomalyInfo.Type]
        DATASET_HIGH_NUM_EXAMPLES: _ClassVar[AnomalyInfo.Type]
        WEIGHTED_FEATURE_NAME_COLLISION: _ClassVar[AnomalyInfo.Type]
        WEIGHTED_FEATURE_MISSING_VALUE: _ClassVar[AnomalyInfo.Type]
        WEIGHTED_FEATURE_MISSING_WEIGHT: _ClassVar[AnomalyInfo.Type]
        WEIGHTED_FEATURE_LENGTH_MISMATCH: _ClassVar[AnomalyInfo.Type]
        VALUE_NESTEDNESS_MISMATCH: _ClassVar[AnomalyInfo.Type]
        DOMAIN_INVALID_FOR_TYPE: _ClassVar[AnomalyInfo.Type]
        FEATURE_MISSING_NAME: _ClassVar[AnomalyInfo.Type]
        FEATURE_MISSING_TYPE: _ClassVar[AnomalyInfo.Type]
        INVALID_SCHEMA_SPECIFICATION: _ClassVar[AnomalyInfo.Type]
        INVALID_DOMAIN_SPECIFICATION: _ClassVar[AnomalyInfo.Type]
        UNEXPECTED_DATA_TYPE: _ClassVar[AnomalyInfo.Type]
        SEQUENCE_VALUE_TOO_FEW_OCCURRENCES: _ClassVar[AnomalyInfo.Type]
        SEQUENCE_VALUE_TOO_MANY_OCCURRENCES: _ClassVar[AnomalyInfo.Type]
        SEQUENCE_VALUE_TOO_SMALL_FRACTION: _ClassVar[AnomalyInfo.Type]
        SEQUENCE_VALUE_TOO_LARGE_FRACTION: _ClassVar[AnomalyInfo.Type]
        FEATURE_COVERAGE_TOO_LOW: _ClassVar[AnomalyInfo.Type]
        FEATURE_COVERAGE_TOO_SHORT_AVG_TOKEN_LENGTH: _ClassVar[AnomalyInfo.Type]
        NLP_WRONG_LOCATION: _ClassVar[AnomalyInfo.Type]
        EMBEDDING_SHAPE_INVALID: _ClassVar[AnomalyInfo.Type]
        MAX_IMAGE_BYTE_SIZE_EXCEEDED: _ClassVar[AnomalyInfo.Type]
        INVALID_FEATURE_SHAPE: _ClassVar[AnomalyInfo.Type]
        STATS_NOT_AVAILABLE: _ClassVar[AnomalyInfo.Type]
        DERIVED_FEATURE_BAD_LIFECYCLE: _ClassVar[AnomalyInfo.Type]
        DERIVED_FEATURE_INVALID_SOURCE: _ClassVar[AnomalyInfo.Type]
        CUSTOM_VALIDATION: _ClassVar[AnomalyInfo.Type]
    UNKNOWN_TYPE: AnomalyInfo.Type
    MULTIPLE_REASONS: AnomalyInfo.Type
    BOOL_TYPE_BIG_INT: AnomalyInfo.Type
    BOOL_TYPE_BYTES_NOT_INT: AnomalyInfo.Type
    BOOL_TYPE_BYTES_NOT_STRING: AnomalyInfo.Type
    BOOL_TYPE_FLOAT_NOT_INT: AnomalyInfo.Type
    BOOL_TYPE_FLOAT_NOT_STRING: AnomalyInfo.Type
    BOOL_TYPE_INT_NOT_STRING: AnomalyInfo.Type
    BOOL_TYPE_SMALL_INT: AnomalyInfo.Type
    BOOL_TYPE_STRING_NOT_INT: AnomalyInfo.Type
    BOOL_TYPE_UNEXPECTED_STRING: AnomalyInfo.Type
    BOOL_TYPE_UNEXPECTED_FLOAT: AnomalyInfo.Type
    BOOL_TYPE_INVALID_CONFIG: AnomalyInfo.Type
    ENUM_TYPE_BYTES_NOT_STRING: AnomalyInfo.Type
    ENUM_TYPE_FLOAT_NOT_STRING: AnomalyInfo.Type
    ENUM_TYPE_INT_NOT_STRING: AnomalyInfo.Type
    ENUM_TYPE_INVALID_UTF8: AnomalyInfo.Type
    ENUM_TYPE_UNEXPECTED_STRING_VALUES: AnomalyInfo.Type
    FEATURE_TYPE_HIGH_NUMBER_VALUES: AnomalyInfo.Type
    FEATURE_TYPE_LOW_FRACTION_PRESENT: AnomalyInfo.Type
    FEATURE_TYPE_LOW_NUMBER_PRESENT: AnomalyInfo.Type
    FEATURE_TYPE_LOW_NUMBER_VALUES: AnomalyInfo.Type
    FEATURE_TYPE_NOT_PRESENT: AnomalyInfo.Type
    FEATURE_TYPE_NO_VALUES: AnomalyInfo.Type
    FEATURE_TYPE_UNEXPECTED_REPEATED: AnomalyInfo.Type
    FEATURE_TYPE_HIGH_UNIQUE: AnomalyInfo.Type
    FEATURE_TYPE_LOW_UNIQUE: AnomalyInfo.Type
    FEATURE_TYPE_NO_UNIQUE: AnomalyInfo.Type
    FLOAT_TYPE_BIG_FLOAT: AnomalyInfo.Type
    FLOAT_TYPE_NOT_FLOAT: AnomalyInfo.Type
    FLOAT_TYPE_SMALL_FLOAT: AnomalyInfo.Type
    FLOAT_TYPE_STRING_NOT_FLOAT: AnomalyInfo.Type
    FLOAT_TYPE_NON_STRING: AnomalyInfo.Type
    FLOAT_TYPE_UNKNOWN_TYPE_NUMBER: AnomalyInfo.Type
    FLOAT_TYPE_HAS_NAN: AnomalyInfo.Type
    FLOAT_TYPE_HAS_INF: AnomalyInfo.Type
    INT_TYPE_BIG_INT: AnomalyInfo.Type
    INT_TYPE_INT_EXPECTED: AnomalyInfo.Type
    INT_TYPE_NOT_INT_STRING: AnomalyInfo.Type
    INT_TYPE_NOT_STRING: AnomalyInfo.Type
    INT_TYPE_SMALL_INT: AnomalyInfo.Type
    INT_TYPE_STRING_EXPECTED: AnomalyInfo.Type
    INT_TYPE_UNKNOWN_TYPE_NUMBER: AnomalyInfo.Type
    LOW_SUPPORTED_IMAGE_FRACTION: AnomalyInfo.Type
    SCHEMA_MISSING_COLUMN: AnomalyInfo.Type
    SCHEMA_NEW_COLUMN: AnomalyInfo.Type
    SCHEMA_TRAINING_SERVING_SKEW: AnomalyInfo.Type
    STRING_TYPE_NOW_FLOAT: AnomalyInfo.Type
    STRING_TYPE_NOW_INT: AnomalyInfo.Type
    COMPARATOR_CONTROL_DATA_MISSING: AnomalyInfo.Type
    COMPARATOR_TREATMENT_DATA_MISSING: AnomalyInfo.Type
    COMPARATOR_L_INFTY_HIGH: AnomalyInfo.Type
    COMPARATOR_JENSEN_SHANNON_DIVERGENCE_HIGH: AnomalyInfo.Type
    COMPARATOR_NORMALIZED_ABSOLUTE_DIFFERENCE_HIGH: AnomalyInfo.Type
    NO_DATA_IN_SPAN: AnomalyInfo.Type
    SPARSE_FEATURE_MISSING_VALUE: AnomalyInfo.Type
    SPARSE_FEATURE_MISSING_INDEX: AnomalyInfo.Type
    SPARSE_FEATURE_LENGTH_MISMATCH: AnomalyInfo.Type
    SPARSE_FEATURE_NAME_COLLISION: AnomalyInfo.Type
    SEMANTIC_DOMAIN_UPDATE: AnomalyInfo.Type
    COMPARATOR_LOW_NUM_EXAMPLES: AnomalyInfo.Type
    COMPARATOR_HIGH_NUM_EXAMPLES: AnomalyInfo.Type
    DATASET_LOW_NUM_EXAMPLES: AnomalyInfo.Type
    DATASET_HIGH_NUM_EXAMPLES: AnomalyInfo.Type
    WEIGHTED_FEATURE_NAME_COLLISION: AnomalyInfo.Type
    WEIGHTED_FEATURE_MISSING_VALUE: AnomalyInfo.Type
    WEIGHTED_FEATURE_MISSING_WEIGHT: AnomalyInfo.Type
    WEIGHTED_FEATURE_LENGTH_MISMATCH: AnomalyInfo.Type
    VALUE_NESTEDNESS_MISMATCH: AnomalyInfo.Type
    DOMAIN_INVALID_FOR_TYPE: AnomalyInfo.Type
    FEATURE_MISSING_NAME: AnomalyInfo.Type
    FEATURE_MISSING_TYPE: AnomalyInfo.Type
    INVALID_SCHEMA_SPECIFICATION: AnomalyInfo.Type
    INVALID_DOMAIN_SPECIFICATION: AnomalyInfo.Type
    UNEXPECTED_DATA_TYPE: AnomalyInfo.Type
    SEQUENCE_VALUE_TOO_FEW_OCCURRENCES: AnomalyInfo.Type
    SEQUENCE_VALUE_TOO_MANY_OCCURRENCES: AnomalyInfo.Type
    SEQUENCE_VALUE_TOO_SMALL_FRACTION: AnomalyInfo.Type
    SEQUENCE_VALUE_TOO_LARGE_FRACTION: AnomalyInfo.Type
    FEATURE_COVERAGE_TOO_LOW: AnomalyInfo.Type
    FEATURE_COVERAGE_TOO_SHORT_AVG_TOKEN_LENGTH: AnomalyInfo.Type
    NLP_WRONG_LOCATION: AnomalyInfo.Type
    EMBEDDING_SHAPE_INVALID: AnomalyInfo.Type
    MAX_IMAGE_BYTE_SIZE_EXCEEDED: AnomalyInfo.Type
    INVALID_FEATURE_SHAPE: AnomalyInfo.Type
    STATS_NOT_AVAILABLE: AnomalyInfo.Type
    DERIVED_FEATURE_BAD_LIFECYCLE: AnomalyInfo.Type
    DERIVED_FEATURE_INVALID_SOURCE: AnomalyInfo.Type
    CUSTOM_VALIDATION: AnomalyInfo.Type
    class Reason(_message.Message):
        __slots__ = ("type", "short_description", "description")
        TYPE_FIELD_NUMBER: _ClassVar[int]
        SHORT_DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
        DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
        type: AnomalyInfo.Type
        short_description: str
        description: str
        def __init__(self, type: _Optional[_Union[AnomalyInfo.Type, str]] = ..., short_description: _Optional[str] = ..., description: _Optional[str] = ...) -> None: ...
    PATH_FIELD_NUMBER: _ClassVar[int]
    SEVERITY_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    SHORT_DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    path: _path_pb2.Path
    severity: AnomalyInfo.Severity
    description: str
    short_description: str
    reason: _containers.RepeatedCompositeFieldContainer[AnomalyInfo.Reason]
    def __init__(self, path: _Optional[_Union[_path_pb2.Path, _Mapping]] = ..., severity: _Optional[_Union[AnomalyInfo.Severity, str]] = ..., description: _Optional[str] = ..., short_description: _Optional[str] = ..., reason: _Optional[_Iterable[_Union[AnomalyInfo.Reason, _Mapping]]] = ...) -> None: ...

class Anomalies(_message.Message):
    __slots__ = ("baseline", "anomaly_name_format", "anomaly_info", "dataset_anomaly_info", "data_missing")
    class AnomalyNameFormat(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
        __slots__ = ()
        UNKNOWN: _ClassVar[Anomalies.AnomalyNameFormat]
        SERIALIZED_PATH: _ClassVar[Anomalies.AnomalyNameFormat]
    UNKNOWN: Anomalies.AnomalyNameFormat
    SERIALIZED_PATH: Anomalies.AnomalyNameFormat
    class AnomalyInfoEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: AnomalyInfo
        def __init__(self, key: _Optional[str] = ..., value: _Optional[_Union[AnomalyInfo, _Mapping]] = ...) -> None: ...
    BASELINE_FIELD_NUMBER: _ClassVar[int]
    ANOMALY_NAME_FORMAT_FIELD_NUMBER: _ClassVar[int]
    ANOMALY_INFO_FIELD_NUMBER: _ClassVar[int]
    DATASET_ANOMALY_INFO_FIELD_NUMBER: _ClassVar[int]
    DATA_MISSING_FIELD_NUMBER: _ClassVar[int]
    baseline: _schema_pb2.Schema
    anomaly_name_format: Anomalies.AnomalyNameFormat
    anomaly_info: _containers.MessageMap[str, AnomalyInfo]
    dataset_anomaly_info: AnomalyInfo
    data_missing: bool
    def __init__(self, baseline: _Optional[_Union[_schema_pb2.Schema, _Mapping]] = ..., anomaly_name_format: _Optional[_Union[Anomalies.AnomalyNameFormat, str]] = ..., anomaly_info: _Optional[_Mapping[str, AnomalyInfo]] = ..., dataset_anomaly_info: _Optional[_Union[AnomalyInfo, _Mapping]] = ..., data_missing: _Optional[bool] = ...) -> None: ...
