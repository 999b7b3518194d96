from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class FeatureType(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    TYPE_UNKNOWN: _ClassVar[FeatureType]
    BYTES: _ClassVar[FeatureType]
    INT: _ClassVar[FeatureType]
    FLOAT: _ClassVar[FeatureType]
    STRUCT: _ClassVar[FeatureType]

class LifecycleStage(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    UNKNOWN_STAGE: _ClassVar[LifecycleStage]
    PLANNED: _ClassVar[LifecycleStage]
    ALPHA: _ClassVar[LifecycleStage]
    BETA: _ClassVar[LifecycleStage]
    PRODUCTION: _ClassVar[LifecycleStage]
    DEPRECATED: _ClassVar[LifecycleStage]
    DEBUG_ONLY: _ClassVar[LifecycleStage]
    DISABLED: _ClassVar[LifecycleStage]
    VALIDATION_DERIVED: _ClassVar[LifecycleStage]
TYPE_UNKNOWN: FeatureType
BYTES: FeatureType
INT: FeatureType
FLOAT: FeatureType
STRUCT: FeatureType
UNKNOWN_STAGE: LifecycleStage
PLANNED: LifecycleStage
ALPHA: LifecycleStage
BETA: LifecycleStage
PRODUCTION: LifecycleStage
DEPRECATED: LifecycleStage
DEBUG_ONLY: LifecycleStage
DISABLED: LifecycleStage
VALIDATION_DERIVED: LifecycleStage

class Schema(_message.Message):
    __slots__ = ("feature", "string_domain", "float_domain", "int_domain", "default_environment")
    FEATURE_FIELD_NUMBER: _ClassVar[int]
    STRING_DOMAIN_FIELD_NUMBER: _ClassVar[int]
    FLOAT_DOMAIN_FIELD_NUMBER: _ClassVar[int]
    INT_DOMAIN_FIELD_NUMBER: _ClassVar[int]
    DEFAULT_ENVIRONMENT_FIELD_NUMBER: _ClassVar[int]
    feature: _containers.RepeatedCompositeFieldContainer[Feature]
    string_domain: _containers.RepeatedCompositeFieldContainer[StringDomain]
    float_domain: _containers.RepeatedCompositeFieldContainer[FloatDomain]
    int_domain: _containers.RepeatedCompositeFieldContainer[IntDomain]
    default_environment: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, feature: _Optional[_Iterable[_Union[Feature, _Mapping]]] = ..., string_domain: _Optional[_Iterable[_Union[StringDomain, _Mapping]]] = ..., float_domain: _Optional[_Iterable[_Union[FloatDomain, _Mapping]]] = ..., int_domain: _Optional[_Iterable[_Union[IntDomain, _Mapping]]] = ..., default_environment: _Optional[_Iterable[str]] = ...) -> None: ...

class Feature(_message.Message):
    __slots__ = ("name", "deprecated", "presence", "shape", "value_count", "type", "domain", "int_domain", "float_domain", "string_domain", "bool_domain", "in_environment", "not_in_environment", "lifecycle_stage")
    NAME_FIELD_NUMBER: _ClassVar[int]
    DEPRECATED_FIELD_NUMBER: _ClassVar[int]
    PRESENCE_FIELD_NUMBER: _ClassVar[int]
    SHAPE_FIELD_NUMBER: _ClassVar[int]
    VALUE_COUNT_FIELD_NUMBER: _ClassVar[int]
    TYPE_FIELD_NUMBER: _ClassVar[int]
    DOMAIN_FIELD_NUMBER: _ClassVar[int]
    INT_DOMAIN_FIELD_NUMBER: _ClassVar[int]
    FLOAT_DOMAIN_FIELD_NUMBER: _ClassVar[int]
    STRING_DOMAIN_FIELD_NUMBER: _ClassVar[int]
    BOOL_DOMAIN_FIELD_NUMBER: _ClassVar[int]
    IN_ENVIRONMENT_FIELD_NUMBER: _ClassVar[int]
    NOT_IN_ENVIRONMENT_FIELD_NUMBER: _ClassVar[int]
    LIFECYCLE_STAGE_FIELD_NUMBER: _ClassVar[int]
    name: str
    deprecated: bool
    presence: FeaturePresence
    shape: FixedShape
    value_count: ValueCount
    type: FeatureType
    domain: str
    int_domain: IntDomain
    float_domain: FloatDomain
    string_domain: StringDomain
    bool_domain: BoolDomain
    in_environment: _containers.RepeatedScalarFieldContainer[str]
    not_in_environment: _containers.RepeatedScalarFieldContainer[str]
    lifecycle_stage: LifecycleStage
    def __init__(self, name: _Optional[str] = ..., deprecated: _Optional[bool] = ..., presence: _Optional[_Union[FeaturePresence, _Mapping]] = ..., shape: _Optional[_Union[FixedShape, _Mapping]] = ..., value_count: _Optional[_Union[ValueCount, _Mapping]] = ..., type: _Optional[_Union[FeatureType, str]] = ..., domain: _Optional[str] = ..., int_domain: _Optional[_Union[IntDomain, _Mapping]] = ..., float_domain: _Optional[_Union[FloatDomain, _Mapping]] = ..., string_domain: _Optional[_Union[StringDomain, _Mapping]] = ..., bool_domain: _Optional[_Union[BoolDomain, _Mapping]] = ..., in_environment: _Optional[_Iterable[str]] = ..., not_in_environment: _Optional[_Iterable[str]] = ..., lifecycle_stage: _Optional[_Union[LifecycleStage, str]] = ...) -> None: ...

class FeaturePresence(_message.Message):
    __slots__ = ("min_fraction", "min_count")
    MIN_FRACTION_FIELD_NUMBER: _ClassVar[int]
    MIN_COUNT_FIELD_NUMBER: _ClassVar[int]
    min_fraction: float
    min_count: int
    def __init__(self, min_fraction: _Optional[float] = ..., min_count: _Optional[int] = ...) -> None: ...

class ValueCount(_message.Message):
    __slots__ = ("min", "max")
    MIN_FIELD_NUMBER: _ClassVar[int]
    MAX_FIELD_NUMBER: _ClassVar[int]
    min: int
    max: int
    def __init__(self, min: _Optional[int] = ..., max: _Optional[int] = ...) -> None: ...

class FixedShape(_message.Message):
    __slots__ = ("dim",)
    class Dim(_message.Message):
        __slots__ = ("size", "name")
        SIZE_FIELD_NUMBER: _ClassVar[int]
        NAME_FIELD_NUMBER: _ClassVar[int]
        size: int
        name: str
        def __init__(self, size: _Optional[int] = ..., name: _Optional[str] = ...) -> None: ...
    DIM_FIELD_NUMBER: _ClassVar[int]
    dim: _containers.RepeatedCompositeFieldContainer[FixedShape.Dim]
    def __init__(self, dim: _Optional[_Iterable[_Union[FixedShape.Dim, _Mapping]]] = ...) -> None: ...

class StringDomain(_message.Message):
    __slots__ = ("name", "value", "is_categorical")
    class Categorical(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
        __slots__ = ()
        CATEGORICAL_UNSPECIFIED: _ClassVar[StringDomain.Categorical]
        CATEGORICAL_YES: _ClassVar[StringDomain.Categorical]
        CATEGORICAL_NO: _ClassVar[StringDomain.Categorical]
    CATEGORICAL_UNSPECIFIED: StringDomain.Categorical
    CATEGORICAL_YES: StringDomain.Categorical
    CATEGORICAL_NO: StringDomain.Categorical
    NAME_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    IS_CATEGORICAL_FIELD_NUMBER: _ClassVar[int]
    name: str
    value: _containers.RepeatedScalarFieldContainer[str]
    is_categorical: StringDomain.Categorical
    def __init__(self, name: _Optional[str] = ..., value: _Optional[_Iterable[str]] = ..., is_categorical: _Optional[_Union[StringDomain.Categorical, str]] = ...) -> None: ...

class IntDomain(_message.Message):
    __slots__ = ("name", "min", "max", "is_categorical")
    NAME_FIELD_NUMBER: _ClassVar[int]
    MIN_FIELD_NUMBER: _ClassVar[int]
    MAX_FIELD_NUMBER: _ClassVar[int]
    IS_CATEGORICAL_FIELD_NUMBER: _ClassVar[int]
    name: str
    min: int
    max: int
    is_categorical: bool
    def __init__(self, name: _Optional[str] = ..., min: _Optional[int] = ..., max: _Optional[int] = ..., is_categorical: _Optional[bool] = ...) -> None: ...

class FloatDomain(_message.Message):
    __slots__ = ("name", "min", "max", "disallow_nan", "disallow_inf", "is_embedding", "is_categorical")
    NAME_FIELD_NUMBER: _ClassVar[int]
    MIN_FIELD_NUMBER: _ClassVar[int]
    MAX_FIELD_NUMBER: _ClassVar[int]
    DISALLOW_NAN_FIELD_NUMBER: _ClassVar[int]
    DISALLOW_INF_FIELD_NUMBER: _ClassVar[int]
    IS_EMBEDDING_FIELD_NUMBER: _ClassVar[int]
    IS_CATEGORICAL_FIELD_NUMBER: _ClassVar[int]
    name: str
    min: float
    max: float
    disallow_nan: bool
    disallow_inf: bool
    is_embedding: bool
    is_categorical: bool
    def __init__(self, name: _Optional[str] = ..., min: _Optional[float] = ..., max: _Optional[float] = ..., disallow_nan: _Optional[bool] = ..., disallow_inf: _Optional[bool] = ..., is_embedding: _Optional[bool] = ..., is_categorical: _Optional[bool] = ...) -> None: ...

class BoolDomain(_message.Message):
    __slots__ = ("name", "true_value", "false_value")
    NAME_FIELD_NUMBER: _ClassVar[int]
    TRUE_VALUE_FIELD_NUMBER: _ClassVar[int]
    FALSE_VALUE_FIELD_NUMBER: _ClassVar[int]
    name: str
    true_value: str
    false_value: str
    def __init__(self, name: _Optional[str] = ..., true_value: _Optional[str] = ..., false_value: _Optional[str] = ...) -> None: ...
