from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class StringIntLabelMapItem(_message.Message):
    __slots__ = ("name", "id", "display_name")
    NAME_FIELD_NUMBER: _ClassVar[int]
    ID_FIELD_NUMBER: _ClassVar[int]
    DISPLAY_NAME_FIELD_NUMBER: _ClassVar[int]
    name: str
    id: int
    display_name: str
    def __init__(self, name: _Optional[str] = ..., id: _Optional[int] = ..., display_name: _Optional[str] = ...) -> None: ...

class StringIntLabelMap(_message.Message):
    __slots__ = ("item",)
    ITEM_FIELD_NUMBER: _ClassVar[int]
    item: _containers.RepeatedCompositeFieldContainer[StringIntLabelMapItem]
    def __init__(self, item: _Optional[_Iterable[_Union[StringIntLabelMapItem, _Mapping]]] = ...) -> None: ...
