from google.protobuf import descriptor_pb2 as _descriptor_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import python_message as _python_message
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class RecordsMetadata(_message.Message):
    __slots__ = ("file_comment", "record_type_name", "file_descriptor", "record_writer_options", "num_records")
    Extensions: _python_message._ExtensionDict
    FILE_COMMENT_FIELD_NUMBER: _ClassVar[int]
    RECORD_TYPE_NAME_FIELD_NUMBER: _ClassVar[int]
    FILE_DESCRIPTOR_FIELD_NUMBER: _ClassVar[int]
    RECORD_WRITER_OPTIONS_FIELD_NUMBER: _ClassVar[int]
    NUM_RECORDS_FIELD_NUMBER: _ClassVar[int]
    file_comment: str
    record_type_name: str
    file_descriptor: _containers.RepeatedCompositeFieldContainer[_descriptor_pb2.FileDescriptorProto]
    record_writer_options: str
    num_records: int
    def __init__(self, file_comment: _Optional[str] = ..., record_type_name: _Optional[str] = ..., file_descriptor: _Optional[_Iterable[_Union[_descriptor_pb2.FileDescriptorProto, _Mapping]]] = ..., record_writer_options: _Optional[str] = ..., num_records: _Optional[int] = ...) -> None: ...
