// Recording stops in a frame: what is still pending is reported, then nothing more.
globalThis.__browserdPersonRecorder && globalThis.__browserdPersonRecorder.stop()
