"""Pascal VOC: `JPEGImages/<file>`, `Annotations/<stem>.xml` (one `object` a box: `name`,
`bndbox` xmin/ymin/xmax/ymax in pixels of the image as the records hold them, no +1 shift),
and `ImageSets/Main/{split}.txt` listing each split's stems."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from xml.etree import ElementTree as ET

from tfrview.core.output.annotated import Annotated, Classes, split_folder
from tfrview.core.records.images import open_image


def _num(v: float) -> str:
    return str(int(v)) if float(v).is_integer() else f"{v:.6f}".rstrip("0")


def _xml(a: Annotated) -> bytes:
    root = ET.Element("annotation")
    ET.SubElement(root, "folder").text = "JPEGImages"
    ET.SubElement(root, "filename").text = a.file_name
    src = ET.SubElement(root, "source")
    ET.SubElement(src, "database").text = "tfrview export"
    ET.SubElement(src, "record").text = str(a.number)
    if a.source_id is not None:
        ET.SubElement(src, "source_id").text = a.source_id
    size = ET.SubElement(root, "size")
    ET.SubElement(size, "width").text = str(a.width)
    ET.SubElement(size, "height").text = str(a.height)
    ET.SubElement(size, "depth").text = str(len(open_image(a.image).getbands()))
    ET.SubElement(root, "segmented").text = "0"
    for box, name in zip(a.boxes.tolist(), a.class_names, strict=True):
        o = ET.SubElement(root, "object")
        ET.SubElement(o, "name").text = name
        ET.SubElement(o, "pose").text = "Unspecified"
        ET.SubElement(o, "truncated").text = "0"
        ET.SubElement(o, "difficult").text = "0"
        bb = ET.SubElement(o, "bndbox")
        for tag, v in zip(("xmin", "ymin", "xmax", "ymax"), box, strict=True):
            ET.SubElement(bb, tag).text = _num(v)
    ET.indent(root)
    return ET.tostring(root, encoding="utf-8", xml_declaration=False) + b"\n"


def write_voc(records: Iterable[Annotated], folder: Path, classes: Classes) -> int:
    """Images and XML as they come, the split lists at the end. Returns images written."""
    for d in ("JPEGImages", "Annotations", "ImageSets/Main"):
        (folder / d).mkdir(parents=True)
    stems: dict[str, list[str]] = {}
    n = 0
    for a in records:
        (folder / "JPEGImages" / a.file_name).write_bytes(a.image)
        (folder / "Annotations" / f"{a.stem}.xml").write_bytes(_xml(a))
        stems.setdefault(split_folder(a.split), []).append(a.stem)
        n += 1
    for word, names in stems.items():
        (folder / "ImageSets" / "Main" / f"{word}.txt").write_text(
            "".join(s + "\n" for s in names), encoding="utf-8"
        )
    (folder / "labels.txt").write_text(
        "".join(name + "\n" for _, name in classes.ordered()), encoding="utf-8"
    )
    return n
