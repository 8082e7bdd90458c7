// An ad beacon (an EasyList-listed path): reports the impression.
new Image().src = "/pixel.gif?beacon=" + encodeURIComponent(location.href);
