"""What is inside one record: payloads, images, boxes and their conventions, label maps, summaries."""
