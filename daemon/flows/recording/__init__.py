"""Making a flow: the session's tool actions and a person's own input recorded as steps, DevTools imports."""
