/** Model text as the log can hold it (U+0000 and lone surrogates as U+FFFD), and well-formed text for a request's fields: see libs/text. */
export { recordableText, wellFormedText } from '../../text';
