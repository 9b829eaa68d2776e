// The one CSV writer lives in src/contracts/csv.ts, below every layer that writes CSV (the API's statements too).
export { type CsvCell, type CsvNumber, csvField, csvNumber, toCsv } from '../contracts/csv.ts';
